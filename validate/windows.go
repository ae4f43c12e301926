package validate

import (
	"context"
	"sync"
	"time"

	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/rfc2544"
)

// A step's time is its measurement windows (traffic that counts) and overhead (set-up,
// connections, settling, draining, tear-down): the report says both per step and the
// verdict line both for the run, so a line sees where its seconds per board go.

// windows adds up a step's measurement windows.
type windows struct {
	mu  sync.Mutex
	sum time.Duration
}

// add counts a measurement that began at start with its nominal window: its time, at
// most that window (what it took beyond, connecting and draining, is overhead).
func (w *windows) add(start time.Time, nominal time.Duration) {
	d := time.Since(start)
	if nominal > 0 {
		d = min(d, nominal)
	}
	w.mu.Lock()
	w.sum += d
	w.mu.Unlock()
}

// total is the windows so far.
func (w *windows) total() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sum
}

// timedTrialer counts each trial's window.
type timedTrialer struct {
	rfc2544.Trialer
	w *windows
}

func (t timedTrialer) Trial(ctx context.Context, size int, fps float64, d time.Duration, count uint64) (frames.Result, error) {
	defer t.w.add(time.Now(), d)
	return t.Trialer.Trial(ctx, size, fps, d, count)
}

// timedMeter counts each measurement's window (d).
type timedMeter struct {
	experiment.Meter
	d time.Duration
	w *windows
}

func (m timedMeter) Measure(ctx context.Context) (map[string]float64, error) {
	defer m.w.add(time.Now(), m.d)
	return m.Meter.Measure(ctx)
}
