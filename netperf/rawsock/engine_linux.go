package rawsock

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zynqnet/linerate/netperf/frames"
)

// Gen runs the senders until the run's Count or Duration: each on its own thread
// (pinned where its CPU says), stamping its stream's frames 0, 1, ... into its ring and
// handing the frames due to the driver in one batch. The pacing is shared (see pacer):
// FPS and Count are the senders' total.
func Gen(ctx context.Context, senders []Sender, o GenOptions) (GenStats, error) {
	start := time.Now()
	p := newPacer(o, start)
	stats := make([]GenStats, len(senders))
	sent := make([]atomic.Uint64, len(senders))
	errs := make([]error, len(senders))
	var wg sync.WaitGroup
	for i := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i], errs[i] = send(ctx, senders[i], p, o, &sent[i])
		}()
	}
	progress(o.Progress, start, &wg, func() uint64 {
		var n uint64
		for i := range sent {
			n += sent[i].Load()
		}
		return n
	})
	var st GenStats
	for i, s := range stats {
		st.Sent += s.Sent
		st.Bytes += s.Bytes
		st.Unsent += s.Unsent
		st.Elapsed = max(st.Elapsed, s.Elapsed)
		st.CPU += s.CPU
		st.Senders = append(st.Senders, ThreadStats{CPU: senders[i].CPU, Frames: s.Sent, CPUTime: s.CPU})
	}
	return st, errors.Join(errs...)
}

// progress calls fn about once a second with count() until wg is done.
func progress(fn func(uint64, time.Duration), start time.Time, wg *sync.WaitGroup, count func() uint64) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if fn == nil {
		<-done
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			fn(count(), time.Since(start))
		}
	}
}

// send is one sender's loop. Up to 4096 frames a batch: bigger batches gained nothing
// measurable, and a frame's TX stamp waits in the ring for the batch before it.
func send(ctx context.Context, s Sender, p *pacer, o GenOptions, sent *atomic.Uint64) (st GenStats, err error) {
	th, err := lockThread(s.CPU)
	if err != nil {
		return st, err
	}
	defer th.unlock(s.CPU >= 0)
	defer func() { st.CPU = th.used() }()
	tx, b := s.TX, s.B
	reap := func([]byte, int64) {}
	if o.HW != nil {
		reap = func(f []byte, hwNanos int64) {
			if in, k := frames.Parse(f); k == frames.Data && o.HW.Sampled(uint64(in.Seq)) {
				o.HW.TX(in.Stream, in.Seq, hwNanos)
			}
		}
	}
	defer func() { tx.Reap(reap) }()
	for ctx.Err() == nil {
		tx.Reap(reap)
		n, wait, done := p.claim(4096)
		if done {
			break
		}
		if n == 0 {
			if wait > 300*time.Microsecond {
				// At most 20 ms at a time: at a slow rate the next frame can be seconds
				// away, and the run must still end at its duration or on a signal.
				time.Sleep(min(wait-200*time.Microsecond, 20*time.Millisecond))
			} else {
				runtime.Gosched()
			}
			continue
		}
		ts := time.Now().UnixNano()
		var filled uint64
		for ; filled < n; filled++ {
			slot, err := tx.Slot()
			if err != nil {
				p.unclaim(n - filled)
				return st, err
			}
			if slot == nil {
				break
			}
			if o.FPS > 0 && filled > 0 {
				// Paced: a batch is a few frames, each stamped as it goes into the ring,
				// not when the batch began (latency trials run paced). At line rate one
				// stamp a batch saves the clock reads; the batch leaves as one.
				ts = time.Now().UnixNano()
			}
			// A slot that kept this frame's template from its last lap is stamped in place.
			key, l := b.Key(st.Sent), 0
			if tx.Holds(key) {
				l = b.Stamp(slot, st.Sent, ts)
			} else {
				l = b.Frame(slot, st.Sent, ts)
			}
			tx.CommitAs(l, key)
			st.Sent++
			st.Bytes += uint64(l + frames.FCS)
		}
		p.unclaim(n - filled)
		sent.Store(st.Sent)
		if err := tx.Flush(); err != nil {
			return st, err
		}
		if filled == 0 {
			// The ring is full: the driver is the bottleneck; give it the CPU.
			time.Sleep(20 * time.Microsecond)
		}
	}
	st.Elapsed = time.Since(p.start)
	tx.Drain(time.Second)
	// What the kernel still has not taken (the link gone at the end) was never sent.
	unsent, bytes := tx.Unsent()
	st.Unsent = min(uint64(unsent), st.Sent)
	st.Sent -= st.Unsent
	st.Bytes -= min(bytes, st.Bytes)
	sent.Store(st.Sent)
	if o.EndMarkers {
		// Three markers, a millisecond apart: one lost marker must not cost the count.
		for i := 0; i < 3; i++ {
			if slot, _ := tx.Slot(); slot != nil {
				tx.Commit(b.EndFrame(slot, st.Sent))
				tx.Kick()
			}
			time.Sleep(time.Millisecond)
		}
		tx.Drain(time.Second)
	}
	return st, nil
}

// sinkRing is one receive ring's thread of a sink: its own accounting, and what the
// waiting loop reads of it while it runs.
type sinkRing struct {
	s                            *frames.Streams
	received, corrupted, foreign atomic.Uint64
	// ends is each stream the ring has seen, and whether its end marker came; the
	// waiting loop reads it under mu. known is len(ends), ended its true values.
	mu           sync.Mutex
	ends         map[uint16]bool
	known, ended int
	st           ThreadStats
	handled      uint64
	err          error
}

// read counts the ring's frames on a thread of its own (pinned to its CPU) until halt.
func (r *sinkRing) read(rx *RX, halt *atomic.Bool) {
	th, err := lockThread(r.st.CPU)
	if err != nil {
		r.err = err
		halt.Store(true)
		return
	}
	defer th.unlock(r.st.CPU >= 0)
	for !halt.Load() {
		k, err := rx.Poll(10*time.Millisecond, r.s.Add)
		if err != nil {
			r.err = err
			halt.Store(true)
			break
		}
		r.handled += uint64(k)
		r.received.Store(r.s.Received())
		r.corrupted.Store(r.s.Corrupted())
		r.foreign.Store(r.s.Foreign)
		r.noteEnds()
	}
	r.st.CPUTime = th.used()
}

// noteEnds records the streams seen and their end markers for the waiting loop; the
// lock is taken only when one is new.
func (r *sinkRing) noteEnds() {
	ended := 0
	for _, c := range r.s.C {
		if _, ok := c.SawEnd(); ok {
			ended++
		}
	}
	if len(r.s.C) == r.known && ended == r.ended {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.s.C {
		_, ok := c.SawEnd()
		r.ends[c.Stream] = ok
	}
	r.known, r.ended = len(r.s.C), ended
}

// sinkProgress sums the rings' counts so far, and counts the streams any ring saw and
// those whose end marker came to one of them.
func sinkProgress(rs []*sinkRing) (p SinkProgress, ended int) {
	ends := map[uint16]bool{}
	for _, r := range rs {
		p.Received += r.received.Load()
		p.Corrupted += r.corrupted.Load()
		p.Foreign += r.foreign.Load()
		r.mu.Lock()
		for id, e := range r.ends {
			ends[id] = ends[id] || e
		}
		r.mu.Unlock()
	}
	for _, e := range ends {
		if e {
			ended++
		}
	}
	p.Streams = len(ends)
	return p, ended
}

// Sink counts the frames of the streams base..base+n-1 (n 0: of every stream that
// comes, frames.AnyStreams) arriving on the rings, each ring read by its own thread
// (pinned to cpus[i] when cpus is given) into its own accounting, merged when the run
// ends. It returns the merged accounting and what the threads did. Its end markers end
// the run once every stream counted has sent its own.
func Sink(ctx context.Context, rings []*RX, cpus []int, base uint16, n int, o SinkOptions) (*frames.Streams, SinkStats, error) {
	start := time.Now()
	var halt atomic.Bool
	rs := make([]*sinkRing, len(rings))
	var wg sync.WaitGroup
	for i, rx := range rings {
		r := &sinkRing{s: frames.NewStreams(base, n), ends: map[uint16]bool{}, st: ThreadStats{CPU: -1}}
		if n <= 0 {
			r.s = frames.AnyStreams(frames.MaxAnyStreams)
		}
		if o.HW != nil {
			r.s.SetHW(o.HW)
		}
		r.noteEnds()
		if cpus != nil {
			r.st.CPU = cpus[i]
		}
		rs[i] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.read(rx, &halt)
		}()
	}
	grace := o.Grace
	if grace == 0 {
		grace = 200 * time.Millisecond
	}
	var endAt time.Time
	nextProgress := time.Second
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !halt.Load() {
		p, ended := sinkProgress(rs)
		if o.Seen != nil {
			o.Seen.Store(p.Received)
		}
		switch {
		case p.Streams > 0 && ended == p.Streams && endAt.IsZero():
			endAt = time.Now().Add(grace)
		case ended < p.Streams:
			endAt = time.Time{} // a stream that came since has not ended
		}
		el := time.Since(start)
		if ctx.Err() != nil || (o.Duration > 0 && el >= o.Duration) || (o.Count > 0 && p.Received >= o.Count) ||
			(o.Stop != nil && o.Stop.Load()) || (!endAt.IsZero() && time.Now().After(endAt)) {
			break
		}
		if o.Progress != nil && el >= nextProgress {
			o.Progress(p, el)
			nextProgress += time.Second
		}
		<-tick.C
	}
	halt.Store(true)
	wg.Wait()
	st := SinkStats{Elapsed: time.Since(start)}
	var errs []error
	all := rs[0].s
	for i, r := range rs {
		if i > 0 {
			all.Merge(r.s)
		}
		r.st.Frames = r.handled
		st.Handled += r.handled
		st.CPU += r.st.CPUTime
		st.Rings = append(st.Rings, r.st)
		st.Drops += rings[i].Drops()
		errs = append(errs, r.err)
	}
	return all, st, errors.Join(errs...)
}

// dropBook is the reflector's record, shared by its threads, of the test frames its TX
// rings had no room for, per stream; and the streams with drops not yet reported, each
// with a frame of it that fits a TX ring to make the report from (frames.MakeDropReport),
// nil until one comes by.
type dropBook struct {
	mu      sync.Mutex
	maxLen  int
	drops   map[uint16]uint64
	pending map[uint16][]byte
	any     atomic.Bool // pending is not empty
}

func (d *dropBook) dropped(stream uint16, f []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.drops[stream]++
	if _, ok := d.pending[stream]; !ok {
		d.pending[stream] = nil
	}
	d.template(stream, f)
	d.any.Store(true)
}

// template keeps f as stream's report frame when one is wanted and f fits. Locked.
func (d *dropBook) template(stream uint16, f []byte) {
	if t, ok := d.pending[stream]; ok && t == nil && len(f) <= d.maxLen {
		d.pending[stream] = append([]byte(nil), f...)
	}
}

// report tells each sender how many of its stream's frames were dropped here, so they
// are not taken for loss on the path; counts are cumulative over every thread.
func (d *dropBook) report(tx *TX, st *ReflectStats) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for stream, f := range d.pending {
		if f == nil {
			continue // no frame of the stream that fits has come by yet
		}
		slot, _ := tx.Slot()
		if slot == nil {
			return
		}
		n := copy(slot, f)
		frames.MakeDropReport(slot[:n], d.drops[stream])
		frames.SwapMACs(slot[:n])
		tx.Commit(n)
		st.Reports++
		delete(d.pending, stream)
	}
	d.any.Store(len(d.pending) > 0)
}

// Reflect sends every test frame addressed to mac back where it came from, MACs
// swapped, until ctx ends or duration passes (0: until ctx ends). Frame i of the RX
// rings goes back out of TX ring i, each pair on its own thread (pinned to cpus[i] when
// cpus is given).
func Reflect(ctx context.Context, rxs []*RX, txs []*TX, cpus []int, rt Realtime, mac net.HardwareAddr, duration time.Duration, progress func(ReflectStats, time.Duration)) (ReflectStats, error) {
	if rt.Busy && len(cpus) != len(rxs) {
		return ReflectStats{}, errors.New("busy polling needs each reflecting thread pinned to a CPU of its own")
	}
	var mem error
	if rt.On {
		mem = lockMemory()
	}
	rtErrs := make([]error, len(rxs))
	start := time.Now()
	book := &dropBook{maxLen: txs[0].maxLen, drops: map[uint16]uint64{}, pending: map[uint16][]byte{}}
	for _, tx := range txs {
		book.maxLen = min(book.maxLen, tx.maxLen)
	}
	var halt atomic.Bool
	stats := make([]ReflectStats, len(rxs))
	live := make([]atomic.Pointer[ReflectStats], len(rxs))
	errs := make([]error, len(rxs))
	var wg sync.WaitGroup
	for i := range rxs {
		cpu := -1
		if cpus != nil {
			cpu = cpus[i]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i], errs[i] = reflectRing(rxs[i], txs[i], cpu, rt, &rtErrs[i], mac, book, &halt, &live[i])
			if errs[i] != nil {
				halt.Store(true)
			}
		}()
	}
	// Each thread shows its stats once it is set up: the note on how they run is whole
	// then, and the first progress call (at 0s) carries it.
	ready := false
	note := ""
	nextProgress := time.Second
	for !halt.Load() {
		if !ready {
			ready = true
			for i := range live {
				ready = ready && live[i].Load() != nil
			}
			if ready {
				note = realtimeNote(rt, mem, rtErrs, cpus)
				if progress != nil {
					progress(ReflectStats{Realtime: note}, 0)
				}
			}
		}
		el := time.Since(start)
		if ctx.Err() != nil || (duration > 0 && el >= duration) {
			break
		}
		if progress != nil && el >= nextProgress {
			var st ReflectStats
			for i := range live {
				if p := live[i].Load(); p != nil {
					st.add(*p)
				}
			}
			progress(st, el)
			nextProgress += time.Second
		}
		time.Sleep(10 * time.Millisecond)
	}
	halt.Store(true)
	wg.Wait()
	var st ReflectStats
	for _, s := range stats {
		st.add(s)
		st.CPUTime += s.CPUTime
		st.Rings = append(st.Rings, s.Rings...)
	}
	st.NsPerFrame = NsPerFrame(st.CPUTime, st.Reflected+st.Foreign+st.Dropped)
	st.Realtime = cmp.Or(note, realtimeNote(rt, mem, rtErrs, cpus))
	return st, errors.Join(errs...)
}

// reflectRing is one reflecting thread: rx to tx until halt.
// With rt.On the thread is made real-time (rtErr: why not), or with rt.Busy spins on its
// ring instead of sleeping in poll().
func reflectRing(rx *RX, tx *TX, cpu int, rt Realtime, rtErr *error, mac net.HardwareAddr, book *dropBook, halt *atomic.Bool, live *atomic.Pointer[ReflectStats]) (ReflectStats, error) {
	var st ReflectStats
	th, err := lockThread(cpu)
	if err != nil {
		return st, err
	}
	defer th.unlock(cpu >= 0 || rt.On)
	if rt.On && !rt.Busy {
		*rtErr = setFIFO()
	}
	wait := 10 * time.Millisecond
	if rt.Busy {
		wait = 0
	}
	live.Store(&ReflectStats{})
	var txErr error
	handle := func(f []byte, _ int64, _ bool) {
		if len(f) < 14 || !bytes.Equal(f[:6], mac) {
			st.Foreign++
			return
		}
		in, k := frames.Parse(f)
		if k == frames.Foreign {
			st.Foreign++
			return
		}
		slot, err := tx.Slot()
		if err != nil {
			txErr = err
		}
		if slot == nil || len(f) > len(slot) {
			st.Dropped++
			if k == frames.Data {
				book.dropped(in.Stream, f)
			}
			return
		}
		if k == frames.Data && book.any.Load() {
			book.mu.Lock()
			book.template(in.Stream, f)
			book.mu.Unlock()
		}
		n := copy(slot, f)
		frames.SwapMACs(slot[:n])
		tx.Commit(n)
		st.Reflected++
	}
	for idle := 0; !halt.Load(); {
		n, err := rx.Poll(wait, handle)
		if err != nil {
			return st, err
		}
		if txErr != nil {
			return st, txErr
		}
		if book.any.Load() {
			book.report(tx, &st)
		}
		if err := tx.Kick(); err != nil {
			return st, err
		}
		// A spinning thread shows its stats when they change, or now and then (they
		// are a copy on the heap each time).
		if idle++; n > 0 || !rt.Busy || idle >= 1<<16 {
			idle = 0
			snap := st
			live.Store(&snap)
		}
	}
	tx.Drain(time.Second)
	book.report(tx, &st)
	tx.Drain(time.Second)
	st.CPUTime = th.used()
	st.Rings = []ThreadStats{{CPU: cpu, Frames: st.Reflected + st.Foreign + st.Dropped, CPUTime: st.CPUTime}}
	return st, nil
}

// Trial runs one measurement in one process: a sink on rxs for fresh streams (spec's,
// and one more a sender after the first) and Gen with a sender on each of txs (pinned to
// cpus[i] when cpus is given), then waits (up to settle) for the frames in flight. It is
// what the RFC 2544 tests are made of. The result is the streams' sum.
func Trial(ctx context.Context, txs []*TX, rxs []*RX, cpus []int, spec frames.Spec, o GenOptions, settle time.Duration) (frames.Result, GenStats, error) {
	senders := make([]Sender, len(txs))
	for i, tx := range txs {
		s := spec
		s.Stream += uint16(i)
		s.FirstFlow += i * spec.Flows
		b, err := frames.NewBuilder(s)
		if err != nil {
			return frames.Result{}, GenStats{}, err
		}
		senders[i] = Sender{TX: tx, B: b, CPU: -1}
		if cpus != nil {
			senders[i].CPU = cpus[i]
		}
	}
	var stop atomic.Bool
	var seen atomic.Uint64
	var wg sync.WaitGroup
	var sinkErr error
	var streams *frames.Streams
	wg.Add(1)
	go func() {
		defer wg.Done()
		streams, _, sinkErr = Sink(ctx, rxs, nil, spec.Stream, len(txs), SinkOptions{Stop: &stop, Seen: &seen, HW: o.HW})
	}()
	gs, err := Gen(ctx, senders, o)
	if err == nil {
		// Late frames are waited for up to settle, looked for each millisecond (the
		// sink's count moves on its millisecond tick); none when all are in already.
		for deadline := time.Now().Add(settle); seen.Load() < gs.Sent && time.Now().Before(deadline) && ctx.Err() == nil; {
			time.Sleep(time.Millisecond)
		}
	}
	stop.Store(true)
	wg.Wait()
	if err == nil {
		err = sinkErr
	}
	sent := make([]uint64, len(gs.Senders))
	for i, s := range gs.Senders {
		sent[i] = s.Frames
	}
	total, _ := streams.Result(sent, gs.Elapsed)
	return total, gs, err
}
