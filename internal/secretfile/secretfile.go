// Package secretfile reads a file that holds a secret (a board's station token, the
// station's tokens file) by the same rules wherever one is read: a regular file (a FIFO
// would block the reader, a device would be read without end), private to its owner
// (no group or other permission bit), and at most a bound, opened without blocking.
package secretfile

import (
	"fmt"
	"os"
	"syscall"

	"github.com/zynqnet/linerate/internal/readall"
)

// Read returns the file's bytes, or an error naming path and what to do.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not hold the reader
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): put the secret in a file of its own", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read by its group or others (mode %04o): a secret's file must be private; chmod 600 %s", path, perm, path)
	}
	b, err := readall.Limit(f, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
