package command

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/readall"
)

// createPidfile writes this process's pid to path (-I), the pid alone and no newline,
// as iperf3 writes it, and gives the func that removes it at the end. As iperf3, it
// refuses to start when the file names a live process other than this one; unlike a
// plain write, it never writes into nor removes what is not a regular file (-I
// /dev/null must leave /dev/null a device), and the removal leaves a file that another
// process has since claimed.
func createPidfile(path string) (func(), error) {
	self := []byte(strconv.Itoa(os.Getpid()))
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("-I %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("-I %s is %s, not a regular file: give the path of a pid file of its own", path, kind(fi.Mode()))
	default:
		b, err := readall.File(path, 64)
		if err != nil {
			return nil, fmt.Errorf("-I %s: %w", path, err)
		}
		if pid, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil && pid > 0 && pid != os.Getpid() && alive(pid) {
			return nil, fmt.Errorf("another instance of iperf3 appears to be running (pid %d in %s): stop it, or remove the file if that pid is not an iperf3", pid, path)
		}
	}
	if err := atomicfile.Write(path, self, 0o600); err != nil {
		return nil, fmt.Errorf("-I %s: %w", path, err)
	}
	return func() {
		if b, err := readall.File(path, 64); err == nil && bytes.Equal(b, self) {
			os.Remove(path)
		}
	}, nil
}

// alive says whether a process with this pid exists (kill 0: EPERM is one of another
// user's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// kind names what a path that is not a regular file is.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file (" + m.Type().String() + ")"
}
