// Package readall reads whole inputs with a bound: a file, a response body or a plan
// that is larger than its bound is an error naming the bound, never a read that grows
// memory without end (a FIFO, /dev/zero, a hostile server).
package readall

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// TooLarge is an input above its bound.
type TooLarge struct {
	Max int64
}

func (e *TooLarge) Error() string { return fmt.Sprintf("larger than %d bytes", e.Max) }

// MaxSys bounds a file of sysfs, procfs or the device tree, or of a captured tree read
// in their place (linerate --root): the largest real one, /proc/interrupts of a machine
// of hundreds of cores, is a few hundred KiB; a captured tree's may be anything.
const MaxSys = 8 << 20

// Limit reads r to its end, at most max bytes; more is a *TooLarge error.
func Limit(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &TooLarge{Max: max}
	}
	return b, nil
}

// File reads a regular file of at most max bytes. A device, FIFO or directory is refused
// by name: reading one could block or never end.
func File(path string, max int64) ([]byte, error) {
	f, _, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := Limit(f, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// OpenRegular opens path for reading if it is a regular file, and says what it is if not.
// It opens without blocking: a FIFO with no writer would hold a plain open forever.
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
