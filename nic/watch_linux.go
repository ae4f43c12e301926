package nic

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Watch watches until ctx ends, calling onEvent for each event as it happens.
func (w Watcher) Watch(ctx context.Context, onEvent func(LinkEvent)) (*WatchSummary, error) {
	k, err := OpenKernel(w.API)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	rd := &Reader{Root: "/", Kernel: k}
	updates := make(chan netlink.LinkUpdate, 64)
	done := make(chan struct{})
	defer close(done)
	if err := netlink.LinkSubscribeWithOptions(updates, done, netlink.LinkSubscribeOptions{ErrorCallback: func(error) {}}); err != nil {
		return nil, fmt.Errorf("watch %s: rtnetlink: %w", w.Iface, err)
	}
	start := time.Now()
	st, err := w.read(rd)
	if err != nil {
		return nil, err
	}
	if !st.carrier {
		st.downSince = start
	}
	sum := &WatchSummary{Iface: w.Iface, Start: st.String(), Events: []LinkEvent{}, Counters: map[string]uint64{}}
	phy := openPHYWatch(w.Iface)
	if phy != nil {
		defer phy.mii.Close()
		sum.Start += fmt.Sprintf("; PHY at %d: %s", phy.addr, DecodeBMSR(phy.last.bmsr))
	}
	if w.Started != nil {
		w.Started(sum.Start, maps.Clone(st.counters))
	}
	emit := func(kind, detail string) {
		e := LinkEvent{Time: time.Now(), Kind: kind, Detail: w.Iface + " " + detail}
		if w.Excuse != nil {
			e.Excused = w.Excuse(e.Time)
		}
		sum.Events = append(sum.Events, e)
		if kind == "carrier-down" && e.Excused == "" {
			sum.Downs++
		}
		if onEvent != nil {
			onEvent(e)
		}
	}
	tick := time.NewTicker(max(w.Interval, 100*time.Millisecond))
	if w.Interval == 0 {
		tick.Reset(time.Second)
	}
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case u := <-updates:
			if u.Attrs().Name == w.Iface {
				w.carrier(&st, u.IfInfomsg.Flags&unix.IFF_LOWER_UP != 0, sum, emit)
			}
		case <-tick.C:
			now, err := w.read(rd)
			if err != nil {
				emit("carrier-down", "is gone: "+err.Error())
				return w.finish(sum, st, start), nil
			}
			w.carrier(&st, now.carrier, sum, emit)
			w.compare(&st, now, sum, emit)
			phy.compare(emit)
		}
	}
	return w.finish(sum, st, start), nil
}

// carrier records a carrier change.
func (w Watcher) carrier(st *watchState, up bool, sum *WatchSummary, emit func(string, string)) {
	switch {
	case st.carrier && !up:
		st.carrier, st.downSince = false, time.Now()
		emit("carrier-down", "carrier down")
	case !st.carrier && up:
		d := time.Since(st.downSince)
		sum.Down += d
		st.carrier = true
		emit("carrier-up", fmt.Sprintf("carrier up after %.2fs", d.Seconds()))
	}
}

// compare reports what changed in speed, duplex and the error counters.
func (w Watcher) compare(st *watchState, now watchState, sum *WatchSummary, emit func(string, string)) {
	if now.carrier && st.speed != "" && now.speed != st.speed {
		emit("speed", fmt.Sprintf("speed %s -> %s Mb/s", st.speed, now.speed))
	}
	if now.carrier && st.duplex != "" && now.duplex != st.duplex {
		emit("duplex", fmt.Sprintf("duplex %s -> %s", st.duplex, now.duplex))
	}
	if now.carrier {
		st.speed, st.duplex = now.speed, now.duplex
	}
	for _, c := range ErrorCounterNames {
		if d := now.counters[c] - st.counters[c]; now.counters[c] > st.counters[c] {
			sum.Counters[c] += d
			emit("counter", fmt.Sprintf("%s +%d", c, d))
		}
	}
	st.counters = now.counters
}

func (w Watcher) finish(sum *WatchSummary, st watchState, start time.Time) *WatchSummary {
	if !st.carrier {
		sum.Down += time.Since(st.downSince)
	}
	sum.Seconds = time.Since(start).Seconds()
	sum.DownS = sum.Down.Seconds()
	return sum
}

// read reads the port's carrier, speed, duplex and error counters.
func (w Watcher) read(rd *Reader) (watchState, error) {
	stats, err := rd.LinkStats(w.Iface)
	if err != nil {
		return watchState{}, err
	}
	f := func(name string) string {
		v, _ := ReadFile("/", filepath.Join("sys/class/net", w.Iface, name))
		return v
	}
	return watchState{carrier: f("carrier") == "1", speed: f("speed"), duplex: f("duplex"), counters: stats.ErrorCounters()}, nil
}

// phyWatch reads a port's PHY registers through MII, where its driver gives access (a
// macb with its PHY; not veth or a fixed link): a watch without it is the carrier's.
type phyWatch struct {
	mii  *MII
	addr int
	last phyState
}

// openPHYWatch opens the PHY's registers, or nil where there is no MII access. The
// status register is read twice: the first read gives back what latched before the
// watch.
func openPHYWatch(iface string) *phyWatch {
	m, addr, err := OpenPHY(iface)
	if err != nil {
		return nil
	}
	p := &phyWatch{mii: m, addr: addr}
	if _, err = p.read(); err == nil {
		p.last, err = p.read()
	}
	if err != nil {
		m.Close()
		return nil
	}
	return p
}

func (p *phyWatch) read() (phyState, error) {
	var s phyState
	var err error
	if s.bmcr, err = p.mii.Read(p.addr, MIIBMCR); err == nil {
		s.bmsr, err = p.mii.Read(p.addr, MIIBMSR)
	}
	return s, err
}

// compare reads the PHY again and emits what changed since the last read. A read that
// fails (the port going away) is left to the carrier's watch.
func (p *phyWatch) compare(emit func(string, string)) {
	if p == nil {
		return
	}
	now, err := p.read()
	if err != nil {
		return
	}
	for _, c := range phyChanges(p.last, now) {
		emit(c[0], c[1])
	}
	p.last = now
}
