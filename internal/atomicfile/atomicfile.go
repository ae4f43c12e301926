// Package atomicfile writes linerate's output files. A regular file is replaced so that a
// crash leaves the old content or the new, never a mix: a temporary file beside it,
// fsync, rename over, fsync of the directory. What is not a regular file is never
// replaced: a device node, FIFO or terminal is written into, as '> /dev/null' would
// (an output flag pointed at /dev/null must leave /dev/null a device); a symbolic link
// is refused, its target not replaced through it; a directory is refused.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Write writes data to path: replacing a regular file (or creating one with perm),
// writing into a device or FIFO, refusing a link or a directory.
func Write(path string, data []byte, perm os.FileMode) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return replace(path, data, perm)
	case err != nil:
		return err
	case fi.Mode().IsRegular():
		return replace(path, data, perm)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: linerate does not replace a file through a link; give the path of the file itself", path)
	case fi.IsDir():
		return fmt.Errorf("%s is a directory: give a file's path", path)
	}
	return writeInto(path, data, fi.Mode())
}

// CanWrite says, before any work, whether Write could write path ("" is no file asked
// for): its directory exists, and it is not a link or a directory.
func CanWrite(path string) error {
	if path == "" {
		return nil
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(path)
		if di, err := os.Stat(dir); err != nil || !di.IsDir() {
			return fmt.Errorf("%s: the directory %s does not exist", path, dir)
		}
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: linerate does not replace a file through a link; give the path of the file itself", path)
	case fi.IsDir():
		return fmt.Errorf("%s is a directory: give a file's path", path)
	}
	return nil
}

// writeInto writes into a device, FIFO or socket as a shell's redirection does, without
// waiting for a FIFO that nobody reads.
func writeInto(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return fmt.Errorf("%s is a FIFO that nobody reads: start its reader first", path)
		}
		return fmt.Errorf("%s (%s): %w", path, mode.Type(), err)
	}
	f.Fd() // back to blocking writes: a reader that is slow is waited for
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("%s (%s): %w", path, mode.Type(), err)
	}
	return f.Close()
}

func replace(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
