package rawsock

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zynqnet/linerate/netperf/frames"
)

// Gen stamps frames 0, 1, ... of b into the ring on an absolute schedule (frame i is due
// at i/FPS seconds), so the average rate is exact whatever the timer's resolution; the
// frames due are handed to the driver in one batch. A sender the CPU left behind (a
// busy machine) catches up at 150% of the rate through a token bucket of 10 ms of
// frames, never in one burst that would overflow a queue the test did not mean to
// measure (a veth backlog holds 1000 frames); 10 ms, not less, so that a batch still
// keeps the rate when each send() takes milliseconds on a loaded CPU.
func Gen(ctx context.Context, tx *TX, b *frames.Builder, o GenOptions) (GenStats, error) {
	var st GenStats
	start := time.Now()
	nextProgress := time.Second
	burst := max(o.FPS*0.010, 16)
	tokens, last := burst, start
	for {
		now := time.Now()
		el := now.Sub(start)
		if ctx.Err() != nil || (o.Duration > 0 && el >= o.Duration) || (o.Count > 0 && st.Sent >= o.Count) {
			break
		}
		if o.Progress != nil && el >= nextProgress {
			o.Progress(st.Sent, el)
			nextProgress += time.Second
		}
		due := ^uint64(0)
		if o.FPS > 0 {
			due = uint64(o.FPS*el.Seconds()) + 1
		}
		if o.Count > 0 {
			due = min(due, o.Count)
		}
		if due <= st.Sent {
			wait := time.Duration(float64(st.Sent)/o.FPS*1e9) - el
			if wait > 300*time.Microsecond {
				// At most 20 ms at a time: at a slow rate the next frame can be seconds
				// away, and the run must still end at its duration or on a signal.
				time.Sleep(min(wait-200*time.Microsecond, 20*time.Millisecond))
			} else {
				runtime.Gosched()
			}
			continue
		}
		ts := now.UnixNano()
		filled := 0
		// Up to 4096 frames a batch: bigger batches gained nothing measurable, and a
		// frame's TX stamp waits in the ring for the batch before it.
		n := min(due-st.Sent, 4096)
		if o.FPS > 0 {
			tokens = min(tokens+now.Sub(last).Seconds()*o.FPS*1.5, burst)
			last = now
			if tokens < 1 {
				runtime.Gosched()
				continue
			}
			n = min(n, uint64(tokens))
			tokens -= float64(n)
		}
		for ; n > 0; n-- {
			slot, err := tx.Slot()
			if err != nil {
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
			l := b.Frame(slot, st.Sent, ts)
			tx.Commit(l)
			st.Sent++
			st.Bytes += uint64(l + frames.FCS)
			filled++
		}
		if err := tx.Flush(); err != nil {
			return st, err
		}
		if filled == 0 {
			// The ring is full: the driver is the bottleneck; give it the CPU.
			time.Sleep(20 * time.Microsecond)
		}
	}
	st.Elapsed = time.Since(start)
	tx.Drain(time.Second)
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

// Sink feeds every frame received into c. It returns the time from the first frame of
// the stream (or the start) to the end.
func Sink(ctx context.Context, rx *RX, c *frames.Counter, o SinkOptions) (time.Duration, error) {
	start := time.Now()
	var endAt time.Time
	nextProgress := time.Second
	grace := o.Grace
	if grace == 0 {
		grace = 200 * time.Millisecond
	}
	for {
		el := time.Since(start)
		if ctx.Err() != nil || (o.Duration > 0 && el >= o.Duration) || (o.Count > 0 && c.Received >= o.Count) ||
			(o.Stop != nil && o.Stop.Load()) || (!endAt.IsZero() && time.Now().After(endAt)) {
			return el, nil
		}
		if o.Progress != nil && el >= nextProgress {
			o.Progress(c, el)
			nextProgress += time.Second
		}
		if _, err := rx.Poll(10*time.Millisecond, c.Add); err != nil {
			return el, err
		}
		if o.Seen != nil {
			o.Seen.Store(c.Received)
		}
		if _, ok := c.SawEnd(); ok && endAt.IsZero() {
			endAt = time.Now().Add(grace)
		}
	}
}

// Reflect sends every test frame addressed to mac back where it came from, MACs swapped,
// until ctx ends or duration passes (0: until ctx ends).
func Reflect(ctx context.Context, rx *RX, tx *TX, mac net.HardwareAddr, duration time.Duration, progress func(ReflectStats, time.Duration)) (ReflectStats, error) {
	var st ReflectStats
	start := time.Now()
	nextProgress := time.Second
	var txErr error
	// Frames the TX ring had no room for, per stream; the streams with drops not yet
	// reported, each with a frame of it that fits the ring to make the report from (see
	// frames.MakeDropReport), nil until one comes by.
	drops := map[uint16]uint64{}
	pending := map[uint16][]byte{}
	template := func(stream uint16, f []byte) {
		if t, ok := pending[stream]; ok && t == nil && len(f) <= tx.maxLen {
			pending[stream] = append([]byte(nil), f...)
		}
	}
	handle := func(f []byte, _ int64) {
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
				drops[in.Stream]++
				if _, ok := pending[in.Stream]; !ok {
					pending[in.Stream] = nil
				}
				template(in.Stream, f)
			}
			return
		}
		if len(pending) > 0 && k == frames.Data {
			template(in.Stream, f)
		}
		n := copy(slot, f)
		frames.SwapMACs(slot[:n])
		tx.Commit(n)
		st.Reflected++
	}
	// report tells each sender how many of its stream's frames were dropped here, so
	// they are not taken for loss on the path; counts are cumulative.
	report := func() {
		for stream, f := range pending {
			if f == nil {
				continue // no frame of the stream that fits has come by yet
			}
			slot, _ := tx.Slot()
			if slot == nil {
				return
			}
			n := copy(slot, f)
			frames.MakeDropReport(slot[:n], drops[stream])
			frames.SwapMACs(slot[:n])
			tx.Commit(n)
			st.Reports++
			delete(pending, stream)
		}
	}
	for {
		el := time.Since(start)
		if ctx.Err() != nil || (duration > 0 && el >= duration) {
			tx.Drain(time.Second)
			report()
			tx.Drain(time.Second)
			return st, nil
		}
		if progress != nil && el >= nextProgress {
			progress(st, el)
			nextProgress += time.Second
		}
		if _, err := rx.Poll(10*time.Millisecond, handle); err != nil {
			return st, err
		}
		if txErr != nil {
			return st, txErr
		}
		report()
		if err := tx.Kick(); err != nil {
			return st, err
		}
	}
}

// Trial runs one measurement in one process: a sink on rx for a fresh stream and Gen on
// tx, then waits (up to settle) for the frames in flight. It is what the RFC 2544 tests
// are made of.
func Trial(ctx context.Context, tx *TX, rx *RX, spec frames.Spec, o GenOptions, settle time.Duration) (frames.Result, GenStats, error) {
	b, err := frames.NewBuilder(spec)
	if err != nil {
		return frames.Result{}, GenStats{}, err
	}
	c := frames.NewCounter(spec.Stream)
	var stop atomic.Bool
	var seen atomic.Uint64
	var wg sync.WaitGroup
	var sinkErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, sinkErr = Sink(ctx, rx, c, SinkOptions{Stop: &stop, Seen: &seen})
	}()
	gs, err := Gen(ctx, tx, b, o)
	if err == nil {
		deadline := time.Now().Add(settle)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
			if seen.Load() >= gs.Sent {
				break
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if err == nil {
		err = sinkErr
	}
	return c.Result(gs.Sent, gs.Elapsed), gs, err
}
