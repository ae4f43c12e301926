package engine

import (
	"context"
	"time"

	"github.com/zynqnet/linerate/netperf/rawsock"
)

// Reflector is a port with the rings a reflector on it needs.
type Reflector struct {
	*Port
	rx   []*rawsock.RX
	tx   []*rawsock.TX
	cpus []int // nil: one unpinned thread
}

// OpenReflector looks the port up and opens its rings: cpus 0, one pair of rings on one
// unpinned thread; N > 0 (or -1, every CPU), that many pairs, the receive rings in a
// fanout group by flow hash, each pair on a thread pinned to its CPU. Close closes them.
func OpenReflector(root, name string, cpus int) (*Reflector, error) {
	p, err := LookupPort(root, name, 1)
	if err != nil {
		return nil, err
	}
	r := &Reflector{Port: p}
	if r.cpus, err = PickCPUs(cpus); err != nil {
		return nil, err
	}
	// Rings of frames, not of blocks: each frame goes back as it arrives, so the round
	// trip measured through the reflector is the path's, not a block timer's.
	if r.rx, err = rawsock.OpenRXRings(p.Name, max(len(r.cpus), 1), true, rawsock.FanoutHash); err != nil {
		return nil, err
	}
	for range r.rx {
		tx, err := rawsock.OpenTX(p.Name, max(p.MTU+18, 1518), true)
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
	return rawsock.Reflect(ctx, r.rx, r.tx, r.cpus, r.MAC, duration, progress)
}
