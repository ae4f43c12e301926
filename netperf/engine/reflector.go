package engine

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"

	"github.com/zynqnet/linerate/netperf/rawsock"
)

// Reflector is a port with the rings a reflector on it needs.
type Reflector struct {
	*Port
	rx   []*rawsock.RX
	tx   []*rawsock.TX
	cpus []int // nil: one unpinned thread
	rt   rawsock.Realtime
}

// OpenReflector looks the port up and opens its rings: cpus 0, one pair of rings on one
// unpinned thread; N > 0 (or -1, every CPU), that many pairs, the receive rings in a
// fanout group by flow hash, each pair on a thread pinned to its CPU. rt says how the
// threads run (Realtime). Close closes them.
func OpenReflector(root, name string, cpus int, rt Realtime) (*Reflector, error) {
	if rt.Kept() && cpus != 0 {
		return nil, badinput.Errorf("--realtime %d keeps one thread on CPU %d; give --cpus with --realtime on", rt.CPU, rt.CPU)
	}
	p, err := LookupPort(root, name, 1)
	if err != nil {
		return nil, err
	}
	r := &Reflector{Port: p, rt: rawsock.Realtime{On: rt.On, Busy: rt.Kept()}}
	if rt.Kept() {
		r.cpus = []int{rt.CPU}
	} else if r.cpus, err = PickCPUs(cpus); err != nil {
		return nil, err
	}
	// Rings of frames, not of blocks: each frame goes back as it arrives, so the round
	// trip measured through the reflector is the path's, not a block timer's.
	if r.rx, err = rawsock.OpenRXRings(p.Name, max(len(r.cpus), 1), rawsock.RXRing{PerFrame: true}, rawsock.FanoutHash); err != nil {
		return nil, err
	}
	for range r.rx {
		tx, err := rawsock.OpenTX(p.Name, max(p.MTU+18, 1518), 0, true)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.tx = append(r.tx, tx)
	}
	return r, nil
}

// Threads is how many reflecting threads the reflector runs.
func (r *Reflector) Threads() int { return len(r.rx) }

// Close closes the rings.
func (r *Reflector) Close() {
	for _, t := range r.tx {
		t.Close()
	}
	for _, x := range r.rx {
		x.Close()
	}
}

// Run reflects until ctx ends or duration passes (0: until ctx ends).
func (r *Reflector) Run(ctx context.Context, duration time.Duration, progress func(rawsock.ReflectStats, time.Duration)) (rawsock.ReflectStats, error) {
	return rawsock.Reflect(ctx, r.rx, r.tx, r.cpus, r.rt, r.MAC, duration, progress)
}

// ReflectResult is a reflector's run, as linerate reflect reports it.
type ReflectResult struct {
	Interface string `json:"interface"`
	// InKernel: the frames were answered in the kernel (ReflectInKernel), not by threads.
	InKernel bool `json:"in_kernel,omitempty"`
	rawsock.ReflectStats
}

// Text is the result's line.
func (r *ReflectResult) Text() string {
	if r.InKernel {
		return fmt.Sprintf("reflect %s: %d frames reflected, %d foreign%s\n", r.Interface, r.Reflected, r.Foreign, semi(r.Realtime))
	}
	return fmt.Sprintf("reflect %s: %d frames reflected, %d foreign, %d dropped (TX ring full); cpu: %.0f ns/frame%s\n",
		r.Interface, r.Reflected, r.Foreign, r.Dropped, r.NsPerFrame, semi(r.Realtime))
}

// semi is "; s", or nothing for an empty s.
func semi(s string) string {
	if s == "" {
		return ""
	}
	return "; " + s
}

// progressLine is the form of a reflector's line a second; a station that runs the
// reflector in a process of its own leaves these out of its log.
var progressLine = regexp.MustCompile(`^reflect \S+: +[0-9.]+s  `)

// Reflect opens a reflector on the port and runs it for duration (or until ctx ends),
// saying what it does on progress: a line when its threads are set up (how they run),
// then a line a second. With inKernel the kernel answers instead (ReflectInKernel),
// which takes no threads to ask for.
func Reflect(ctx context.Context, root, iface string, cpus int, rt Realtime, inKernel bool, duration time.Duration, progress io.Writer) (*ReflectResult, error) {
	if inKernel {
		if cpus != 0 || rt.On {
			return nil, badinput.Errorf("--bpf answers in the kernel's receive path: no threads for --cpus or --realtime")
		}
		return ReflectInKernel(ctx, root, iface, duration, progress)
	}
	p, err := OpenReflector(root, iface, cpus, rt)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	st, err := p.Run(ctx, duration, func(s rawsock.ReflectStats, el time.Duration) {
		if el == 0 {
			fmt.Fprintf(progress, "reflect %s (%s): %d thread(s), for %v%s\n", p.Name, p.MAC, p.Threads(), duration, semi(s.Realtime))
			return
		}
		fmt.Fprintf(progress, "reflect %s: %6.1fs  %d reflected  %d foreign  %d dropped\n", p.Name, el.Seconds(), s.Reflected, s.Foreign, s.Dropped)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	return &ReflectResult{Interface: p.Name, ReflectStats: st}, nil
}
