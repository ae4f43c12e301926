package nic

import (
	"context"
	"time"
)

// Open opens what to read: the live kernel under "/" with the given ethtool API, or,
// with root set, a captured tree (root/sys, root/proc, root/linerate/kernel.json).
// close releases the kernel's sockets.
func Open(root, api string) (r *Reader, close func(), err error) {
	if root != "" {
		k, err := OpenCaptured(root)
		if err != nil {
			return nil, nil, err
		}
		return &Reader{Root: root, Kernel: k}, func() {}, nil
	}
	k, err := OpenKernel(api)
	if err != nil {
		return nil, nil, err
	}
	return &Reader{Root: "/", Kernel: k}, func() { k.Close() }, nil
}

// RecordFunc receives sample i's recorder and recording kernel (linerate snapshot).
type RecordFunc func(i int, r *Recorder, k *RecordingKernel)

// SampleLive reads two samples of the live system, interval apart, so counters become
// rates. With rec set, each sample's reads are recorded and handed to it.
func SampleLive(ctx context.Context, api string, interval time.Duration, ifaces []string, rec RecordFunc) (before, after *Sample, err error) {
	k, err := OpenKernel(api)
	if err != nil {
		return nil, nil, err
	}
	defer k.Close()
	var out [2]*Sample
	for i := range out {
		if i == 1 {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(interval):
			}
		}
		r := &Reader{Root: "/", Kernel: k}
		var rk *RecordingKernel
		if rec != nil {
			rk = NewRecordingKernel(k)
			r.Kernel, r.Recorder = rk, NewRecorder()
		}
		if out[i], err = r.Sample(ifaces...); err != nil {
			return nil, nil, err
		}
		if rec != nil {
			rec(i, r.Recorder, rk)
		}
	}
	return out[0], out[1], nil
}

// SampleCountersNow reads the interfaces' counters once, live (Reader.SampleCounters):
// an interval's start.
func SampleCountersNow(api string, ifaces ...string) (*Sample, error) {
	k, err := OpenKernel(api)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	return (&Reader{Root: "/", Kernel: k}).SampleCounters(ifaces...)
}

// SampleNow reads the interfaces once, live: one end of an interval whose other end was
// read before (SampleLive reads both).
func SampleNow(api string, ifaces ...string) (*Sample, error) {
	k, err := OpenKernel(api)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	return (&Reader{Root: "/", Kernel: k}).Sample(ifaces...)
}
