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
//
// It reads through the system's calls themselves: a file os.Open opens is put on the
// runtime's poller, which sysfs and procfs files accept, and taken off it at its close,
// two calls more for each of the hundreds of small files a port's read and a run's
// link watch take (on the emulated ZC702's core, about a fifth of a file's cost).
func File(path string, max int64) ([]byte, error) {
	fd, err := open(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := retry(func() error { return syscall.Fstat(fd, &st) }); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		// Not a regular file: said as OpenRegular says it.
		f, _, err := OpenRegular(path)
		if err == nil {
			f.Close()
			err = fmt.Errorf("%s is not a regular file", path)
		}
		return nil, err
	}
	// A file that tells its size (a disk's; sysfs says a page) is read whole with one
	// call and its end found with the next; procfs says 0 and grows from 512 bytes.
	size := 512
	if st.Size > 0 && st.Size < max {
		size = int(st.Size) + 1
	}
	return readTo(fd, path, size, max)
}

// Kernel reads a file of the running kernel's own trees, sysfs and procfs (the device
// tree among them), of at most max bytes, without File's question of what the file is:
// those trees hold no FIFO or device a read could wait on (the file is opened without
// blocking all the same, and a directory's read fails), and the kernel makes a file's
// content as it is read, so its size says nothing a read does not. Four calls (open,
// the read, the read that finds the end, close) where File makes five: a port's read
// takes some 150 such files, at about 0.2 ms a call on the emulated ZC702's core. Not
// for a captured tree or a path a user gives: File is.
func Kernel(path string, max int64) ([]byte, error) {
	fd, err := open(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	// A sysfs attribute is at most a page; procfs files mostly fit one too.
	return readTo(fd, path, int(min(max+1, 4097)), max)
}

// open opens path to read, without blocking (a FIFO with no writer would hold a plain
// open forever).
func open(path string) (int, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// readTo reads fd (path) to its end into a buffer of size bytes at first, at most max
// bytes.
func readTo(fd int, path string, size int, max int64) ([]byte, error) {
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		var n int
		err := retry(func() (err error) { n, err = syscall.Read(fd, b[len(b):cap(b)]); return err })
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n <= 0 {
			return b, nil
		}
		b = b[:len(b)+n]
		if int64(len(b)) > max {
			return nil, fmt.Errorf("%s: %w", path, &TooLarge{Max: max})
		}
	}
}

// retry makes a system call again while a signal interrupts it.
func retry(call func() error) error {
	for {
		if err := call(); err != syscall.EINTR {
			return err
		}
	}
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
