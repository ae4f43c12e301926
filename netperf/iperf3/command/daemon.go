package command

import (
	"fmt"
	"os"
	"syscall"
)

// daemonEnv marks the process -D started, so it serves instead of starting another.
const daemonEnv = "LINERATE_IPERF3_DAEMON"

// daemonize starts this same command line again in the background, in a session of its
// own with no terminal, and returns: iperf3 -D's behaviour. --logfile (or -J and a
// pidfile) is how its output is kept; without it, it goes nowhere, as with iperf3.
// (os.StartProcess, not os/exec: 100 KB less in a board's binary for one call.)
func daemonize(args []string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("%w: %v", errNoDaemon, err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%w: %v", errNoDaemon, err)
	}
	defer null.Close()
	p, err := os.StartProcess(exe, append([]string{exe, "iperf3"}, args...), &os.ProcAttr{
		Env:   append(os.Environ(), daemonEnv+"=1"),
		Files: []*os.File{null, null, null},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return fmt.Errorf("%w: %v", errNoDaemon, err)
	}
	return p.Release()
}
