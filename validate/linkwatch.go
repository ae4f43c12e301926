package validate

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
	"github.com/zynqnet/linerate/tune"
)

// The run-long link watch: every port's link (carrier as rtnetlink announces it, speed,
// duplex, error counters, and the PHY's link, fault and control bits where its driver
// gives MII access) watched from before the first step to after the last, so a
// flap during any step is named in that step's result and fails it as a stability
// fault, and the stability step judges its window from the same record instead of
// watching the link a second time.

// flapKinds are the link events that are flaps: the link going away or coming back
// different, as the carrier says or as the PHY's registers do (a loss the PHY latched
// that the driver never showed, a remote fault). A carrier that comes up (a link still
// negotiating) is not, nor an error counter's rise (the counters step judges those,
// with its ignore list), nor a PHY control change (named; the stability step judges it).
var flapKinds = map[string]bool{"carrier-down": true, "speed": true, "duplex": true, "phy-down": true, "phy-fault": true}

// linkWatch is the run's watch of its ports.
type linkWatch struct {
	mu    sync.Mutex
	ports map[string]*portWatch
	api   string
	stop  context.CancelFunc
	wg    sync.WaitGroup
	// sample reads the ports for a baseline (nic.SampleCountersNow; a test's fake).
	sample func(api string, ifaces ...string) (*nic.Sample, error)
	// ready gets a value as each port's watch has read its port, or could not start.
	ready chan struct{}
}

// portWatch is what the watch saw of one port: its state as it began, and every event
// since, in order.
type portWatch struct {
	begun time.Time
	start string // the port's state as the watch began ("" until it has begun)
	// counters are the port's error counters as the watch first read them.
	counters map[string]uint64
	// settled is when the port's link step last passed: its negotiation is over.
	settled time.Time
	events  []nic.LinkEvent
	err     error // why the port is not watched
	// base is the port read when its link settled, the first sample of a doctor step's
	// interval (nil: none, or a step since changed the port: see keepBase).
	base   *nic.Sample
	baseAt time.Time
	// basing is closed when the baseline being taken is in (nil: none under way);
	// baseGen counts the port's baselines asked for and dropped, so that one a step
	// dropped while it was being taken is not kept.
	basing  chan struct{}
	baseGen int
	// read is the port as the doctor step last read it (its interval's end), for a
	// tune step after it to plan from; dropped with the baseline (keepBase).
	read *nic.Interface
}

// watchLinks starts a watcher of each interface (waitReady waits for them to begin);
// close ends them. An interface whose watch cannot start is said on console once, and
// its steps are judged without it.
func watchLinks(ctx context.Context, ifaces []string, api string, console io.Writer) *linkWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &linkWatch{ports: map[string]*portWatch{}, api: api, stop: cancel, ready: make(chan struct{}, len(ifaces))}
	ready := w.ready
	for _, iface := range ifaces {
		if w.ports[iface] != nil {
			continue
		}
		p := &portWatch{begun: time.Now()}
		w.ports[iface] = p
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			nw := nic.Watcher{Iface: iface, API: api, Interval: time.Second, Excuse: tune.Excuse(iface), Started: func(state string, counters map[string]uint64) {
				w.mu.Lock()
				p.start, p.begun, p.counters = state, time.Now(), counters
				w.mu.Unlock()
				ready <- struct{}{}
			}}
			_, err := nw.Watch(ctx, func(ev nic.LinkEvent) {
				w.mu.Lock()
				p.events = append(p.events, ev)
				w.mu.Unlock()
				if ev.Kind != "counter" {
					// As it happens, for the operator; counter rises go into the steps' results.
					fmt.Fprintln(console, "  "+ev.String())
				}
			})
			if err != nil {
				w.mu.Lock()
				p.err = err
				w.mu.Unlock()
				fmt.Fprintf(console, "linerate validate: %s: the run-long link watch could not start (%v): flaps are seen by the stability step's window only\n", iface, err)
				ready <- struct{}{}
			}
		}()
	}
	return w
}

// waitReady waits until every port's watch has read its port (at most 5 s): the first
// step's window begins then. The watch reads its ports while the run reads who the
// board is (header), which waits on the station's clock.
func (w *linkWatch) waitReady() {
	if w == nil {
		return
	}
	timeout := time.After(5 * time.Second)
	for range w.ports {
		select {
		case <-w.ready:
		case <-timeout:
			return
		}
	}
}

// close ends the watch and waits for its watchers.
func (w *linkWatch) close() {
	if w == nil {
		return
	}
	w.stop()
	w.wg.Wait()
}

// Events are the events of the ports from from to to (inclusive), in time order; nil
// without a watch.
func (w *linkWatch) Events(ifaces []string, from, to time.Time) []nic.LinkEvent {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []nic.LinkEvent
	for _, iface := range ifaces {
		p := w.ports[iface]
		if p == nil {
			continue
		}
		for _, ev := range p.events {
			if !ev.Time.Before(from) && !ev.Time.After(to) {
				out = append(out, ev)
			}
		}
	}
	return out
}

// settle marks the ports' links negotiated (their link step passed) at t.
func (w *linkWatch) settle(ifaces []string, t time.Time) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, iface := range ifaces {
		if p := w.ports[iface]; p != nil {
			p.settled = t
		}
	}
}

// Settled is when the port's link is judged from: the end of its last passing link
// step, or the watch's start.
func (w *linkWatch) Settled(iface string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.ports[iface]
	if p.settled.After(p.begun) {
		return p.settled
	}
	return p.begun
}

// Counters are the port's error counters as its watch began (false: no watch, or its
// first read had none): the run's baseline, read once.
func (w *linkWatch) Counters(iface string) (map[string]uint64, bool) {
	if w == nil {
		return nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.ports[iface]
	if p == nil || p.counters == nil {
		return nil, false
	}
	return maps.Clone(p.counters), true
}

// Watching says whether the port's link is watched (its watch began and holds).
func (w *linkWatch) Watching(iface string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.ports[iface]
	return p != nil && p.start != "" && p.err == nil
}

// Summary is what the watch saw of iface from from to to, as a watcher of that window
// alone would have said it: the state as the window began, its events, the carrier
// losses and the time without carrier (not excused), and the error counters that rose.
func (w *linkWatch) Summary(iface string, from, to time.Time) *nic.WatchSummary {
	w.mu.Lock()
	p := w.ports[iface]
	state, evs := p.start, append([]nic.LinkEvent(nil), p.events...)
	w.mu.Unlock()
	sum := &nic.WatchSummary{Iface: iface, Seconds: to.Sub(from).Seconds(), Events: []nic.LinkEvent{}, Counters: map[string]uint64{}}
	up := strings.HasPrefix(state, "carrier up")
	var downSince time.Time
	if !up {
		downSince = from
	}
	for _, ev := range evs {
		if ev.Time.Before(from) {
			switch ev.Kind {
			case "carrier-down":
				up, state, downSince = false, "no carrier", from
			case "carrier-up":
				up, state = true, "carrier up"
			}
			continue
		}
		if ev.Time.After(to) {
			break
		}
		if sum.Start == "" {
			sum.Start = state
		}
		sum.Events = append(sum.Events, ev)
		switch {
		case ev.Kind == "carrier-down" && up:
			up, downSince = false, ev.Time
			if ev.Excused == "" {
				sum.Downs++
			}
		case ev.Kind == "carrier-up" && !up:
			up = true
			sum.Down += ev.Time.Sub(downSince)
		case ev.Kind == "counter":
			if name, n, ok := counterRise(ev.Detail, iface); ok {
				sum.Counters[name] += n
			}
		}
	}
	if sum.Start == "" {
		sum.Start = state
	}
	if !up {
		sum.Down += to.Sub(downSince)
	}
	sum.DownS = sum.Down.Seconds()
	return sum
}

// counterRise reads a counter event's detail, "eth0 rx_crc_errors +3".
func counterRise(detail, iface string) (string, uint64, bool) {
	f := strings.Fields(strings.TrimPrefix(detail, iface+" "))
	if len(f) != 2 || !strings.HasPrefix(f[1], "+") {
		return "", 0, false
	}
	n, err := strconv.ParseUint(f[1][1:], 10, 64)
	return f[0], n, err == nil
}

// holdLink puts the link events the run-long watch saw during an attempt into its
// result, and fails the attempt as a stability fault on a flap of its ports that
// linerate did not cause. A link step waits for the link as it negotiates and a
// stability step judges the same events by its own rule: their events are named, not
// held against them here.
func holdLink(res *plan.StepResult, typ string, evs []nic.LinkEvent) {
	var flaps, said []string
	for _, ev := range evs {
		res.LinkEvents = append(res.LinkEvents, ev.String())
		if ev.Excused != "" || ev.Kind == "counter" {
			continue
		}
		said = append(said, ev.String())
		if flapKinds[ev.Kind] {
			flaps = append(flaps, ev.String())
		}
	}
	if len(flaps) == 0 || typ == "link" {
		return
	}
	res.Flap = flaps[0]
	if typ == "stability" {
		return
	}
	reason := "stability fault: the link flapped during this step: " + strings.Join(said, "; ")
	if !res.Pass && res.Reason != "" {
		reason += "; and " + res.Reason
	}
	res.Pass, res.Skipped, res.Reason = false, false, reason
}

// The doctor's interval. A doctor step samples the port twice and judges its rates over
// the interval between (errors rising, frames sent and none received); on its own it
// waits 2 s of idle link for the second sample. In a run the first sample is taken as
// the link step passes, so the steps between (identity, the PHY's self-test) fall in
// the interval instead of adding to it: the counters step already judges the same time.
// A step that changes the port's settings or loads it ends the baseline: the doctor
// then samples its own interval.

// baseKeepers are the step types that leave a port's baseline standing: they read the
// port, or (phy) change it only for a moment and put it back.
var baseKeepers = map[string]bool{"link": true, "identity": true, "phy": true, "doctor": true}

// takeBase samples the ports as their link settles, on a goroutine of its own: the
// steps that follow (identity, the PHY's self-test, which waits on its frames) run
// meanwhile, and Base waits for it. The sample's counters are the interval's start
// whatever else a step does to the port as it is taken: the doctor judges only their
// rise, and a step that leaves the port changed drops the baseline (keepBase), also
// one still being taken.
func (w *linkWatch) takeBase(ifaces []string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	done := make(chan struct{})
	gens := map[*portWatch]int{}
	for _, iface := range ifaces {
		if p := w.ports[iface]; p != nil {
			p.baseGen++
			p.basing, gens[p] = done, p.baseGen
		}
	}
	sample := w.sample
	if sample == nil {
		// The counters alone: what the doctor reads of its interval's start.
		sample = nic.SampleCountersNow
	}
	w.wg.Go(func() {
		defer close(done)
		// The interval starts as the sample does: the link counters (rtnetlink's dump)
		// are the first thing it reads; the driver's, softnet's and the CPUs' follow
		// within it. Counted from its end, a sample slowed by the steps it runs beside
		// (the PHY's self-test, on a board's one emulated core) had the doctor wait out
		// its minimum interval again.
		at := time.Now()
		smp, err := sample(w.api, ifaces...)
		if err != nil {
			return // the doctor step samples its own interval
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		for p, gen := range gens {
			if p.baseGen == gen { // else dropped while it was taken
				p.base, p.baseAt = smp, at
			}
		}
	})
}

// keepBase drops the ports' baselines (and their doctor's read) after a step of type
// typ that changes them.
func (w *linkWatch) keepBase(ifaces []string, typ string) {
	if w == nil || baseKeepers[typ] {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, iface := range ifaces {
		if p := w.ports[iface]; p != nil {
			p.base, p.read = nil, nil
			p.baseGen++
		}
	}
}

// keepRead keeps the port as a doctor step read it (Read).
func (w *linkWatch) keepRead(ifc *nic.Interface) {
	if w == nil || ifc == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.ports[ifc.Name]; p != nil {
		p.read = ifc
	}
}

// Read is the port as the last doctor step read it, where no step since changed it; nil
// where there is none.
func (w *linkWatch) Read(iface string) *nic.Interface {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.ports[iface]; p != nil {
		return p.read
	}
	return nil
}

// Base is the port's baseline sample and when it was taken, or nil; a baseline being
// taken is waited for.
func (w *linkWatch) Base(iface string) (*nic.Sample, time.Time) {
	if w == nil {
		return nil, time.Time{}
	}
	var done chan struct{}
	w.mu.Lock()
	if p := w.ports[iface]; p != nil {
		done = p.basing
	}
	w.mu.Unlock()
	if done != nil {
		<-done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.ports[iface]; p != nil && p.base != nil {
		return p.base, p.baseAt
	}
	return nil, time.Time{}
}
