package engine

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/rawsock"
	"github.com/zynqnet/linerate/nic"
)

// ParseCPUs reads a --cpus value: a count of threads, each pinned to a CPU of its own,
// or all (every CPU this process may run on, -1). The empty string is 0: one thread,
// not pinned.
func ParseCPUs(flagName, s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	if strings.EqualFold(s, "all") {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1024 {
		return 0, badinput.Errorf("%s %q: want a count of CPUs (1, 2, ...) or all", flagName, s)
	}
	return n, nil
}

// PickCPUs turns a ParseCPUs count into the CPUs the threads are pinned to: nil for 0
// (one thread, not pinned), the first n CPUs this process may run on for n, all of them
// for -1. More than there are is bad input that names how many there are.
func PickCPUs(n int) ([]int, error) {
	if n == 0 {
		return nil, nil
	}
	cpus, err := rawsock.CPUs(max(n, 0))
	if err != nil {
		return nil, badinput.Errorf("--cpus %d: %v", n, err)
	}
	return cpus, nil
}

// Trialer runs RFC 2544 trials (rfc2544.Trialer) through the raw-socket engine: frames
// from Src to Dst out of the TX rings (one sender a ring, pinned to CPUs when given),
// counted as they come back on the RX rings.
type Trialer struct {
	TX       []*rawsock.TX
	RX       []*rawsock.RX
	CPUs     []int // the senders' CPUs; nil: not pinned
	Src, Dst net.HardwareAddr
	// Root and Port name the sending port, whose tx_dropped counter tells frames its
	// driver refused (qdisc bypass drops them there) from frames lost on the path.
	Root, Port string
	// Kind is the latency's kind: "round-trip" through a reflector, "one-way" looped.
	Kind string
	// Settle is how long the receiver waits for late frames after the sender is done.
	Settle time.Duration
	stream uint16
}

// OpenTrialer opens the rings of trials from port p to dst, counted back on rxPort (p's
// own name through a reflector, a second port looped): cpus as OpenReflector takes it,
// a sender and a receive ring a CPU. Close closes the rings.
func OpenTrialer(root string, p *Port, dst net.HardwareAddr, rxPort string, maxLen, cpus int, kind string) (*Trialer, error) {
	e := &Trialer{Src: p.MAC, Dst: dst, Kind: kind, Settle: 500 * time.Millisecond, Root: root, Port: p.Name}
	var err error
	if e.CPUs, err = PickCPUs(cpus); err != nil {
		return nil, err
	}
	n := max(len(e.CPUs), 1)
	for i := 0; i < n; i++ {
		tx, err := rawsock.OpenTX(p.Name, maxLen, true)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.TX = append(e.TX, tx)
	}
	// Blocks, not frames: a trial's count does not wait on a block's timer (the
	// reflector hands frames on as they come, and the RX time is the kernel's stamp).
	if e.RX, err = rawsock.OpenRXRings(rxPort, n, false, rawsock.FanoutHash); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Close closes the rings.
func (e *Trialer) Close() {
	for _, t := range e.TX {
		t.Close()
	}
	for _, r := range e.RX {
		r.Close()
	}
}

// Trial sends size-byte frames at fps for d (or count frames) and counts them back.
func (e *Trialer) Trial(ctx context.Context, size int, fps float64, d time.Duration, count uint64) (frames.Result, error) {
	// Fresh streams per trial (one a sender): frames late from the last one are foreign
	// to this one.
	e.stream += uint16(max(len(e.TX), 1))
	spec := frames.Spec{Src: e.Src, Dst: e.Dst, Sizes: []int{size}, Flows: 1, Stream: e.stream}
	o := rawsock.GenOptions{FPS: fps, Duration: d}
	if count > 0 {
		o = rawsock.GenOptions{FPS: fps, Count: count, Duration: time.Duration(float64(count)/fps*2e9) + 5*time.Second}
	}
	before, okBefore := e.txDropped()
	r, _, err := rawsock.Trial(ctx, e.TX, e.RX, e.CPUs, spec, o, e.Settle)
	if after, ok := e.txDropped(); ok && okBefore && after > before {
		r.SenderDrops = after - before
	}
	r.Offered = count
	if count == 0 {
		r.Offered = uint64(fps * d.Seconds())
	}
	r.LatencyKind = e.Kind
	return r, err
}

// txDropped reads the sending port's tx_dropped counter.
func (e *Trialer) txDropped() (uint64, bool) {
	if e.Port == "" {
		return 0, false
	}
	s, err := nic.ReadFile(e.Root, "sys/class/net/"+e.Port+"/statistics/tx_dropped")
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}
