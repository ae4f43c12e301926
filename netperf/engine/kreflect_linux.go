//go:build linux && !arm && !arm64

package engine

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/zynqnet/linerate/netperf/kreflect"
	"github.com/zynqnet/linerate/netperf/rawsock"
)

// inKernelNote says how an in-kernel reflector runs, for its first line and its result.
const inKernelNote = "in the kernel: a BPF program at the port's TC ingress (TCX) answers in the softirq that receives the frame"

// ReflectInKernel reflects the test frames addressed to iface in its receive path (a BPF
// program at its TC ingress: package kreflect) for duration (or until ctx ends), saying
// what it does on progress as Reflect does. The program is detached when it returns, or
// when the process ends however it ends.
func ReflectInKernel(ctx context.Context, root, iface string, duration time.Duration, progress io.Writer) (*ReflectResult, error) {
	p, err := LookupPort(root, iface, 1)
	if err != nil {
		return nil, err
	}
	k, err := kreflect.Open(p.Name)
	if err != nil {
		return nil, fmt.Errorf("%w (the reflector without --bpf runs on any kernel)", err)
	}
	defer k.Close()
	fmt.Fprintf(progress, "reflect %s (%s): for %v; %s\n", p.Name, p.MAC, duration, inKernelNote)
	start := time.Now()
	var c kreflect.Counts
	for {
		el := time.Since(start)
		next := el.Truncate(time.Second) + time.Second
		if duration > 0 {
			next = min(next, duration)
		}
		t := time.NewTimer(next - el)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		if c, err = k.Counts(); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		el = time.Since(start)
		if ctx.Err() != nil || duration > 0 && el >= duration {
			break
		}
		fmt.Fprintf(progress, "reflect %s: %6.1fs  %d reflected  %d foreign  %d dropped\n", p.Name, el.Seconds(), c.Reflected, c.Foreign, 0)
	}
	return &ReflectResult{Interface: p.Name, InKernel: true, ReflectStats: rawsock.ReflectStats{Reflected: c.Reflected, Foreign: c.Foreign, Realtime: inKernelNote}}, nil
}

// ProbeInKernel says whether a reflector can be attached to iface in the kernel (nil)
// or why not, and detaches it again.
func ProbeInKernel(iface string) error {
	k, err := kreflect.Open(iface)
	if err != nil {
		return err
	}
	return k.Close()
}
