// Package secretfile reads a file that holds a secret (a board's station token, the
// station's tokens file) by the same rules wherever one is read: a regular file (a FIFO
// would block the reader, a device would be read without end), private to its owner
// (no group or other permission bit), and at most a bound, opened without blocking.
package secretfile

import (
	"fmt"

	"github.com/zynqnet/linerate/internal/readall"
)

// Read returns the file's bytes, or an error naming path and what to do.
func Read(path string, max int64) ([]byte, error) {
	f, fi, err := readall.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read by its group or others (mode %04o): a secret's file must be private; chmod 600 %s", path, perm, path)
	}
	b, err := readall.Limit(f, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
