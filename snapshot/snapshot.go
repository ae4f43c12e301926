// Package snapshot writes and reads linerate snapshot archives: a gzip'd tar with a
// manifest and two samples of everything doctor reads (sysfs and procfs files as they
// were, and the kernel's rtnetlink and ethtool answers), taken some seconds apart. A
// sample is a captured tree that nic.Reader reads with its root set to it.
//
// Archives come from other machines (a factory line mails a failing board's state to an
// engineer), so reading one is defensive: only local paths, symlinks that stay inside
// their sample, bounded sizes and counts.
package snapshot

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/zynqnet/linerate/nic"
)

// Format is the manifest format this build writes and reads.
const Format = 1

// Limits on what Extract accepts.
const (
	MaxEntries   = 200000
	MaxFileBytes = 64 << 20
	MaxTotal     = 512 << 20
)

// Manifest describes a snapshot.
type Manifest struct {
	Format     int       `json:"format"`
	Tool       string    `json:"tool"`
	Version    string    `json:"version"`
	Created    time.Time `json:"created"`
	IntervalNS int64     `json:"interval_ns"`
	Interfaces []string  `json:"interfaces"`
	Samples    []string  `json:"samples"`
}

// Interval is the time between the samples.
func (m *Manifest) Interval() time.Duration { return time.Duration(m.IntervalNS) }

// Sample is one recorded reading.
type Sample struct {
	Entries []nic.RecordedEntry
	Kernel  *nic.Captured
}

// Write writes the archive: manifest.json, then sampleN/... for each sample.
func Write(w io.Writer, m *Manifest, samples []Sample) error {
	m.Format = Format
	m.Tool = "linerate"
	m.Samples = nil
	for i := range samples {
		m.Samples = append(m.Samples, fmt.Sprintf("sample%d", i))
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	mod := m.Created
	put := func(hdr *tar.Header, data []byte) error {
		hdr.ModTime = mod
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if len(data) > 0 {
			_, err := tw.Write(data)
			return err
		}
		return nil
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := put(&tar.Header{Name: "manifest.json", Mode: 0o644, Size: int64(len(mb)), Typeflag: tar.TypeReg}, mb); err != nil {
		return err
	}
	for i, s := range samples {
		dir := m.Samples[i]
		if err := put(&tar.Header{Name: dir + "/", Mode: 0o755, Typeflag: tar.TypeDir}, nil); err != nil {
			return err
		}
		for _, e := range s.Entries {
			name := path.Join(dir, filepath.ToSlash(e.Path))
			var err error
			switch e.Kind {
			case 'd':
				err = put(&tar.Header{Name: name + "/", Mode: 0o755, Typeflag: tar.TypeDir}, nil)
			case 'f':
				err = put(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(e.Data)), Typeflag: tar.TypeReg}, e.Data)
			case 'l':
				err = put(&tar.Header{Name: name, Mode: 0o777, Linkname: e.Target, Typeflag: tar.TypeSymlink}, nil)
			}
			if err != nil {
				return fmt.Errorf("write %s: %w", name, err)
			}
		}
		kb, err := json.Marshal(s.Kernel)
		if err != nil {
			return err
		}
		if err := put(&tar.Header{Name: path.Join(dir, nic.CapturedFile), Mode: 0o644, Size: int64(len(kb)), Typeflag: tar.TypeReg}, kb); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// Error is a snapshot that cannot be read; it names the archive.
type Error struct {
	Archive string
	Err     error
}

func (e *Error) Error() string { return "snapshot " + e.Archive + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// BadInput marks it as the user's input to fix (internal/badinput).
func (e *Error) BadInput() bool { return true }

// Extract unpacks an archive into dir (which should be empty) and returns its manifest.
//
// Every file, directory and link is created through an os.Root opened on dir, so nothing
// can be created outside dir by construction: a path through a link that leads out of
// dir (however the links are chained) is refused by the kernel-checked resolution of
// os.Root, not by reading the link targets as text. The textual checks below stay, for
// the clear error they give on the plain cases.
func Extract(r io.Reader, dir string) (*Manifest, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a gzip'd snapshot: %w", err)
	}
	tr := tar.NewReader(gz)
	x := &extractor{root: root, made: map[string]bool{}}
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("truncated or corrupt archive: %w", err)
		}
		if n >= MaxEntries {
			return nil, fmt.Errorf("more than %d entries", MaxEntries)
		}
		if err := x.entry(hdr, tr); err != nil {
			return nil, err
		}
	}
	if x.m == nil {
		return nil, errors.New("no manifest.json: not a linerate snapshot")
	}
	for _, s := range x.m.Samples {
		if _, err := root.Stat(filepath.Join(s, nic.CapturedFile)); err != nil {
			return nil, fmt.Errorf("%s has no %s: the archive is incomplete", s, nic.CapturedFile)
		}
	}
	return x.m, nil
}

// MaxDepth bounds how deep an archive's paths go: a captured sysfs path is a dozen
// levels; a path of 200,000 would make as many directories from one small entry.
const MaxDepth = 64

// extractor is one Extract: the root everything is made through, the manifest once
// read, and what has been made (bytes, directories), held to the bounds.
type extractor struct {
	root  *os.Root
	m     *Manifest
	total int64
	made  map[string]bool // directories made, counted toward MaxEntries
}

// entry checks and makes one entry.
func (x *extractor) entry(hdr *tar.Header, tr io.Reader) error {
	name := strings.TrimSuffix(hdr.Name, "/")
	if !filepath.IsLocal(name) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("entry %q: not a local path", hdr.Name)
	}
	if d := strings.Count(name, "/") + 1; d > MaxDepth {
		return fmt.Errorf("entry %.80q...: %d levels deep, more than %d", hdr.Name, d, MaxDepth)
	}
	if name == "manifest.json" {
		return x.manifest(hdr, tr)
	}
	if x.m == nil {
		return errors.New("manifest.json must come first")
	}
	sample, _, _ := strings.Cut(name, "/")
	if !contains(x.m.Samples, sample) {
		return fmt.Errorf("entry %q is outside the samples the manifest lists", hdr.Name)
	}
	dst := filepath.FromSlash(name)
	var err error
	switch hdr.Typeflag {
	case tar.TypeDir:
		err = x.mkdirAll(dst)
	case tar.TypeReg:
		err = x.file(hdr, dst, tr)
	case tar.TypeSymlink:
		err = x.symlink(hdr, name, sample, dst)
	default:
		return fmt.Errorf("entry %q: type %q is not a file, directory or symlink", hdr.Name, hdr.Typeflag)
	}
	if err != nil {
		return fmt.Errorf("entry %q: %w", hdr.Name, err)
	}
	return nil
}

func (x *extractor) manifest(hdr *tar.Header, tr io.Reader) error {
	if x.m != nil {
		return errors.New("two manifests")
	}
	if hdr.Size > 1<<20 {
		return errors.New("manifest larger than 1 MiB")
	}
	b, err := io.ReadAll(io.LimitReader(tr, 1<<20))
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	x.m, err = parseManifest(b)
	return err
}

// mkdirAll makes dir and its parents, each counted toward MaxEntries.
func (x *extractor) mkdirAll(dir string) error {
	for d := dir; d != "." && !x.made[d]; d = filepath.Dir(d) {
		x.made[d] = true
		if len(x.made) > MaxEntries {
			return fmt.Errorf("more than %d directories", MaxEntries)
		}
	}
	return x.root.MkdirAll(dir, 0o755)
}

func (x *extractor) file(hdr *tar.Header, dst string, tr io.Reader) error {
	if hdr.Size < 0 || hdr.Size > MaxFileBytes {
		return fmt.Errorf("size %d beyond %d", hdr.Size, MaxFileBytes)
	}
	if x.total += hdr.Size; x.total > MaxTotal {
		return fmt.Errorf("more than %d bytes in all", MaxTotal)
	}
	if err := x.mkdirAll(filepath.Dir(dst)); err != nil {
		return err
	}
	f, err := x.root.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, io.LimitReader(tr, hdr.Size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("truncated or corrupt archive: %w", err)
	}
	return nil
}

func (x *extractor) symlink(hdr *tar.Header, name, sample, dst string) error {
	t := hdr.Linkname
	target := path.Join(path.Dir(name), t)
	if t == "" || path.IsAbs(t) || !filepath.IsLocal(target) || !strings.HasPrefix(target+"/", sample+"/") {
		return fmt.Errorf("link to %q leads outside its sample", t)
	}
	if err := x.mkdirAll(filepath.Dir(dst)); err != nil {
		return err
	}
	if err := x.root.Symlink(t, dst); err != nil {
		return err
	}
	// Resolved on disk (through the links before it), the link must stay in dir.
	if _, err := x.root.Stat(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("link to %q leads outside its sample on disk: %w", t, err)
	}
	return nil
}

func parseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if m.Format > Format {
		return nil, fmt.Errorf("format %d is newer than this linerate reads (%d): read it with a newer linerate", m.Format, Format)
	}
	if m.Format < 1 {
		return nil, fmt.Errorf("manifest: format %d is not a linerate snapshot format", m.Format)
	}
	if len(m.Samples) != 2 {
		return nil, fmt.Errorf("manifest lists %d samples, want 2", len(m.Samples))
	}
	for _, s := range m.Samples {
		if !filepath.IsLocal(s) || strings.ContainsAny(s, "/\\") || s == "manifest.json" {
			return nil, fmt.Errorf("manifest: bad sample name %q", s)
		}
	}
	if m.IntervalNS < 0 {
		return nil, fmt.Errorf("manifest: negative interval")
	}
	return &m, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// removeAll removes an extracted tree; what it cannot remove is an error that names it.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("cleaning up %s: %w", dir, err)
	}
	return nil
}

// Open extracts the archive at p into a new temporary directory; cleanup removes it and
// says when it could not.
func Open(p string) (dir string, m *Manifest, cleanup func() error, err error) {
	f, err := os.Open(p)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%w (give an archive that 'linerate snapshot -o FILE' wrote)", pe.Err)
		}
		return "", nil, nil, &Error{Archive: p, Err: err}
	}
	defer f.Close()
	dir, err = os.MkdirTemp("", "linerate-snapshot-")
	if err != nil {
		return "", nil, nil, err
	}
	cleanup = func() error { return removeAll(dir) }
	if m, err = Extract(f, dir); err != nil {
		return "", nil, nil, &Error{Archive: p, Err: errors.Join(err, cleanup())}
	}
	return dir, m, cleanup, nil
}
