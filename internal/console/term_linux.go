package console

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func windowWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// serialConsole reports whether f is the system console or a serial line (the board's
// UART), where the kernel prints its messages too.
func serialConsole(f *os.File) bool {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return false
	}
	if p == "/dev/console" {
		return true
	}
	for _, pre := range []string{"/dev/ttyPS", "/dev/ttyS", "/dev/ttyAMA", "/dev/ttyUL"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

// QuietKernel keeps kernel messages off the console while a command's output is on it
// (a link bounce's "macb ...: link up" in the middle of tune's table), as dmesg -n 1:
// only emergencies get through; the kernel log keeps everything. It does so only when f
// is the console or a serial line and the level can be set (root); restore puts the
// level back.
func QuietKernel(f *os.File) (restore func()) {
	const printk = "/proc/sys/kernel/printk"
	if !serialConsole(f) && !(os.Getenv(OperatorEnv) != "" && serialConsole(os.Stdin)) {
		return func() {}
	}
	old, err := os.ReadFile(printk)
	if err != nil || len(strings.Fields(string(old))) == 0 {
		return func() {}
	}
	if os.WriteFile(printk, []byte("1"), 0) != nil {
		return func() {}
	}
	level := strings.Fields(string(old))[0]
	return func() { os.WriteFile(printk, []byte(level), 0) }
}
