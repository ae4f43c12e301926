package nic

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// resolveLive resolves p (relative to /) as the kernel does: p opened O_PATH (no read
// of it, every link followed), its real path read back from /proc/self/fd, closed.
// ok is false where /proc cannot say (not mounted): the caller walks the path then. A
// path that is not there is the error os.Stat gives for it.
func resolveLive(p string) (real string, ok bool, err error) {
	full := "/" + strings.TrimPrefix(p, "/")
	var fd int
	for {
		fd, err = unix.Open(full, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return "", true, &os.PathError{Op: "stat", Path: full, Err: err}
	}
	defer unix.Close(fd)
	t, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !strings.HasPrefix(t, "/") || strings.HasSuffix(t, " (deleted)") {
		return "", false, nil
	}
	return strings.TrimPrefix(t, "/"), true, nil
}
