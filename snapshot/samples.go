package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/consolecap"
	"github.com/zynqnet/linerate/nic"
)

// Samples reads the two samples of the archive at p for the given interfaces (none: the
// ones the snapshot holds) and the time between them. A bad archive is an *Error naming
// it; an interface the snapshot lacks is nic's *NotFoundError.
func Samples(p string, ifaces []string) (before, after *nic.Sample, interval time.Duration, err error) {
	dir, m, cleanup, err := Open(p)
	if err != nil {
		return nil, nil, 0, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()
	if len(ifaces) == 0 {
		ifaces = m.Interfaces
	}
	var out [2]*nic.Sample
	for i, s := range m.Samples {
		root := filepath.Join(dir, s)
		k, err := nic.OpenCaptured(root)
		if err != nil {
			return nil, nil, 0, &Error{Archive: p, Err: err}
		}
		r := &nic.Reader{Root: root, Kernel: k}
		if out[i], err = r.Sample(ifaces...); err != nil {
			var nf *nic.NotFoundError
			if errors.As(err, &nf) {
				return nil, nil, 0, err
			}
			return nil, nil, 0, &Error{Archive: p, Err: err}
		}
	}
	return out[0], out[1], m.Interval(), nil
}

// Capture samples the live system twice, interval apart, recording every file and
// kernel answer read, and returns the archive's bytes and its manifest. version is the
// linerate that wrote it.
func Capture(ctx context.Context, api string, interval time.Duration, ifaces []string, version string) ([]byte, *Manifest, int, error) {
	var samples [2]Sample
	before, _, err := nic.SampleLive(ctx, api, interval, ifaces, func(i int, r *nic.Recorder, k *nic.RecordingKernel) {
		samples[i] = Sample{Entries: r.Entries(), Kernel: k.Captured()}
	})
	if err != nil {
		return nil, nil, 0, err
	}
	var names []string
	for _, i := range before.Interfaces {
		names = append(names, i.Name)
	}
	m := &Manifest{Version: version, Created: time.Now().UTC(), IntervalNS: int64(interval), Interfaces: names}
	var buf bytes.Buffer
	if err := Write(&buf, m, samples[:]); err != nil {
		return nil, nil, 0, err
	}
	return buf.Bytes(), m, len(samples[0].Entries) + len(samples[1].Entries), nil
}

// Check reads an archive as Open does, into a directory it removes again, and returns
// its manifest: the archive is one linerate can diagnose.
func Check(archive []byte) (*Manifest, error) {
	dir, err := os.MkdirTemp("", "linerate-snapshot-check-")
	if err != nil {
		return nil, err
	}
	m, err := Extract(bytes.NewReader(archive), dir)
	return m, errors.Join(err, removeAll(dir))
}

// FromConsole takes the last snapshot a board printed on its serial console (between
// internal/consolecap's markers) out of the log file, checked against its size and
// SHA-256 and opened as Open would. A log without one, or a damaged one, is an *Error.
func FromConsole(logFile string) ([]byte, *Manifest, error) {
	f, err := os.Open(logFile)
	if err != nil {
		return nil, nil, &Error{Archive: logFile, Err: err}
	}
	defer f.Close()
	// Read a line at a time: a log of days is far larger than the capture in it.
	archive, err := consolecap.Read(f, MaxFileBytes)
	if err != nil {
		return nil, nil, &Error{Archive: logFile, Err: err}
	}
	m, err := Check(archive)
	if err != nil {
		return nil, nil, &Error{Archive: logFile, Err: fmt.Errorf("the capture is not a snapshot: %w", err)}
	}
	return archive, m, nil
}

// OpenLast extracts the archive at p, as Open does, and returns the tree of its last
// sample, the one show reads.
func OpenLast(p string) (root string, cleanup func() error, err error) {
	dir, m, cleanup, err := Open(p)
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, m.Samples[len(m.Samples)-1]), cleanup, nil
}

// Source is where two samples of some interfaces come from: a snapshot archive (From),
// a captured tree (Root: one sample, no rates), or the live system, Interval apart.
type Source struct {
	From, Root, API string
	Interval        time.Duration
}

// Read takes the two samples of the interfaces (none: every one there is) and the time
// between them.
func (s Source) Read(ctx context.Context, ifaces []string) (before, after *nic.Sample, interval time.Duration, err error) {
	switch {
	case s.From != "":
		return Samples(s.From, ifaces)
	case s.Root != "":
		r, closeFn, err := nic.Open(s.Root, s.API)
		if err != nil {
			return nil, nil, 0, err
		}
		defer closeFn()
		after, err = r.Sample(ifaces...)
		return after, after, 0, err
	}
	before, after, err = nic.SampleLive(ctx, s.API, s.Interval, ifaces, nil)
	return before, after, s.Interval, err
}

// Interfaces reads the interfaces (none: every one but loopback) as they are now: from
// the snapshot's second sample, a captured tree, or the live system.
func (s Source) Interfaces(ifaces []string) (_ []*nic.Interface, err error) {
	root := s.Root
	if s.From != "" {
		r, cleanup, err := OpenLast(s.From)
		if err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, cleanup()) }()
		root = r
	}
	r, closeFn, err := nic.Open(root, s.API)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return r.Read(ifaces...)
}

// CaptureFile captures the interfaces (none: every one but loopback), twice, interval
// apart, into the archive out, and says what it wrote.
func CaptureFile(ctx context.Context, api string, interval time.Duration, ifaces []string, version, out string) (string, error) {
	archive, m, n, err := Capture(ctx, api, interval, ifaces, version)
	if err != nil {
		return "", err
	}
	if err := atomicfile.Write(out, archive, 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote %s: %d entries, %d bytes, interfaces %v, %v between samples\n", out, n, len(archive), m.Interfaces, interval), nil
}

// FromConsoleFile takes the snapshot a board printed on its console out of the log (as
// FromConsole does) into the archive out, and says what it wrote.
func FromConsoleFile(logFile, out string) (string, error) {
	archive, m, err := FromConsole(logFile)
	if err != nil {
		return "", err
	}
	if err := atomicfile.Write(out, archive, 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote %s: %d bytes, interfaces %v, %v between samples, taken by linerate %s\n", out, len(archive), m.Interfaces, m.Interval(), m.Version), nil
}
