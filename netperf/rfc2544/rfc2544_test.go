package rfc2544

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/netperf/frames"
)

// fakeLink forwards capacity frames per second and buffers burst frames: what a policer
// or a slow port does.
type fakeLink struct {
	capacity float64
	buffer   uint64
	trials   int
}

func (f *fakeLink) Trial(_ context.Context, size int, fps float64, d time.Duration, count uint64) (frames.Result, error) {
	f.trials++
	var sent, lost uint64
	if count > 0 {
		sent = count
		if fps > f.capacity && count > f.buffer {
			// While the burst lasts the link drains capacity/fps of what arrives.
			kept := f.buffer + uint64(float64(count)*f.capacity/fps)
			if kept < count {
				lost = count - kept
			}
		}
	} else {
		sent = uint64(fps * d.Seconds())
		if fps > f.capacity {
			lost = uint64(math.Ceil((fps - f.capacity) * d.Seconds()))
		}
	}
	r := frames.Result{Sent: sent, Received: sent - lost, Lost: lost, LatencyKind: "one-way", Latency: &frames.Latency{P50: 1000, P90: 2000, P99: 3000, P999: 4000, Max: 5000}}
	if sent > 0 {
		r.LossPct = 100 * float64(lost) / float64(sent)
	}
	return r, nil
}

func TestRunFindsTheCapacity(t *testing.T) {
	for _, capPct := range []float64{100, 83.3, 42, 7.5, 0.9} {
		line := frames.LinePPS(1000, 512)
		f := &fakeLink{capacity: line * capPct / 100, buffer: 300}
		rs, err := Run(context.Background(), f, Config{Sizes: []int{512}, Trial: time.Second, Res: 1, Tests: AllTests, LinkMbps: 1000})
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		got := r.Throughput.FPS
		if got > f.capacity || got < f.capacity*0.98 {
			t.Errorf("capacity %.1f%%: throughput %.0f fps, want within 2%% below %.0f (trials %d)", capPct, got, f.capacity, len(r.Throughput.Trials))
		}
		if r.Latency == nil || r.Latency.FPS != got {
			t.Errorf("latency not measured at the throughput rate: %+v", r.Latency)
		}
		// Frame loss: from 100% down until two trials in a row lose nothing.
		n := len(r.Loss)
		if capPct < 20 {
			// Loss at every step: the test ends at 10% (RFC 2544 26.3).
			if r.Loss[n-1].Percent != 10 || r.Loss[0].Percent != 100 {
				t.Errorf("frame loss steps on a slow link: %+v", r.Loss)
			}
		} else if n < 2 || r.Loss[n-1].Lost != 0 || r.Loss[n-2].Lost != 0 || r.Loss[0].Percent != 100 {
			t.Errorf("frame loss steps: %+v", r.Loss)
		}
		for i := 0; i < n-2; i++ {
			if r.Loss[i].Lost == 0 && r.Loss[i+1].Lost == 0 {
				t.Errorf("frame loss went on after two clean trials: %+v", r.Loss)
			}
		}
		if capPct == 100 {
			if r.BackToBack.Frames != uint64(line*2) {
				t.Errorf("no-loss link: back-to-back %d, want the whole 2 s burst %d", r.BackToBack.Frames, uint64(line*2))
			}
			continue
		}
		// The longest burst without loss: buffer + what drains meanwhile.
		want := float64(f.buffer) / (1 - capPct/100)
		if b := float64(r.BackToBack.Frames); b > want*1.0001+1 || b < want*0.98 {
			t.Errorf("capacity %.1f%%: back-to-back %v frames, want about %.0f", capPct, b, want)
		}
	}
}

func TestLossTolerance(t *testing.T) {
	line := frames.LinePPS(1000, 64)
	f := &fakeLink{capacity: line * 0.5}
	rs, _ := Run(context.Background(), f, Config{Sizes: []int{64}, Trial: time.Second, Res: 0.5, LossTol: 10, Tests: []string{"throughput"}, LinkMbps: 1000})
	// 10% loss allowed: up to capacity/0.9.
	if got, want := rs[0].Throughput.FPS, f.capacity/0.9; got > want || got < want*0.99 {
		t.Errorf("throughput %.0f, want about %.0f", got, want)
	}
	if rs[0].Latency != nil || rs[0].Loss != nil || rs[0].BackToBack != nil {
		t.Error("tests not asked for were run")
	}
	if !strings.Contains(Table(rs), "throughput") {
		t.Error(Table(rs))
	}
}

func TestConfigBad(t *testing.T) {
	ok := Config{Sizes: []int{64}, Trial: time.Second, Res: 1, Tests: AllTests, LinkMbps: 1000}
	for _, edit := range []func(*Config){
		func(c *Config) { c.Sizes = nil },
		func(c *Config) { c.Trial = 0 },
		func(c *Config) { c.LossTol = -1 },
		func(c *Config) { c.Res = 0 },
		func(c *Config) { c.LinkMbps = 0 },
		func(c *Config) { c.Tests = []string{"jitter"} },
	} {
		c := ok
		edit(&c)
		if _, err := Run(context.Background(), &fakeLink{capacity: 1}, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// dropsApart is a clean path whose sender's driver and reflector drop frames of their
// own, and whose sender falls short at high rates: none of it is the path's loss.
type dropsApart struct{ fakeLink }

func (f *dropsApart) Trial(ctx context.Context, size int, fps float64, d time.Duration, count uint64) (frames.Result, error) {
	offered := count
	if count == 0 {
		offered = uint64(fps * d.Seconds())
	}
	sent := offered
	if fps > 1e6 {
		sent = offered * 9 / 10 // the generator reaches 90% of the rate
	}
	r := frames.Result{Offered: offered, Sent: sent, SenderDrops: sent / 100, ReflectorDrops: sent / 50, LatencyKind: "round-trip",
		Latency: &frames.Latency{P50: 12345, P90: 20000, P99: 30000, P999: 40000, Max: 50000}}
	r.Lost = r.SenderDrops + r.ReflectorDrops
	r.Received = sent - r.Lost
	r.LossPct = 100 * float64(r.Lost) / float64(sent)
	return r, nil
}

func TestLossApartFromPath(t *testing.T) {
	var lines []string
	c := Config{Sizes: []int{64}, Trial: time.Second, Res: 1, LinkMbps: 1000, Tests: AllTests, Progress: func(s string, _, _ int) { lines = append(lines, s) }}
	rs, err := Run(context.Background(), &dropsApart{}, c)
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	// The path loses nothing, but the sender never offers more than 90% of the rate
	// asked above 1 Mfps: 90% of line rate is what was shown, never the 100% asked.
	if math.Abs(r.Throughput.Percent-90) > 1e-3 || math.Abs(r.Throughput.FPS-0.9*r.LineFPS) > 2 || r.Throughput.Trials[0].Percent != 100 {
		t.Fatalf("throughput %+v: the drops apart are not the path's loss, and only what was sent is proven", r.Throughput)
	}
	p := r.Throughput.Trials[0]
	if p.Lost != 0 || p.LossPct != 0 || p.SenderDrops == 0 || p.ReflectorDrops == 0 || p.SenderShort == 0 {
		t.Fatalf("trial %+v", p)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"dropped by the sending port's driver", "dropped by the reflector", "the sender fell", "pass at the 90.000% sent only", "p50 12.3 µs", "p99 30.0 µs"} {
		if !strings.Contains(all, want) {
			t.Errorf("progress does not say %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "&{") {
		t.Errorf("progress prints a Go struct:\n%s", all)
	}
	if table := Table(rs); !strings.Contains(table, "p50 12.3 µs") {
		t.Errorf("table:\n%s", table)
	}
}

// shortOnce's sender falls short on its first trial only (a busy moment).
type shortOnce struct{ calls int }

func (f *shortOnce) Trial(_ context.Context, size int, fps float64, d time.Duration, count uint64) (frames.Result, error) {
	f.calls++
	offered := uint64(fps * d.Seconds())
	sent := offered
	lost := uint64(0)
	if f.calls == 1 {
		sent, lost = offered/2, offered/10 // and the catch-up burst lost some
	}
	return frames.Result{Offered: offered, Sent: sent, Received: sent - lost, Lost: lost, LossPct: 100 * float64(lost) / float64(sent)}, nil
}

// TestShortTrialRunAgain: a trial whose sender fell short is run again, and the clean
// run is what the search judges.
func TestShortTrialRunAgain(t *testing.T) {
	f := &shortOnce{}
	rs, err := Run(context.Background(), f, Config{Sizes: []int{64}, Trial: time.Second, Res: 1, LinkMbps: 1000, Tests: []string{"throughput"}})
	if err != nil {
		t.Fatal(err)
	}
	if f.calls != 2 || rs[0].Throughput.Percent != 100 || rs[0].Throughput.Trials[0].SenderShort != 0 {
		t.Fatalf("%d trials, %+v", f.calls, rs[0].Throughput)
	}
}

// heldBack is a path that pushes back on its sender (a qdisc on the port): whatever
// rate is asked, no more than capacity frames a second are sent, and none is lost.
type heldBack struct {
	capacity float64
	calls    int
}

func (f *heldBack) Trial(_ context.Context, size int, fps float64, d time.Duration, count uint64) (frames.Result, error) {
	f.calls++
	offered := uint64(fps * d.Seconds())
	sent := min(offered, uint64(f.capacity*d.Seconds()))
	return frames.Result{Offered: offered, Sent: sent, Received: sent}, nil
}

// TestHeldBackSender: clean trials that sent less than asked prove only what they
// sent, so the throughput found is the path's rate (within the resolution), not the
// highest rate asked (to the 1% a sender may fall short and still count as having
// offered the rate); every trial above it was run its three times and said why.
func TestHeldBackSender(t *testing.T) {
	line := frames.LinePPS(1000, 512)
	f := &heldBack{capacity: line * 0.1047}
	var lines []string
	rs, err := Run(context.Background(), f, Config{Sizes: []int{512}, Trial: time.Second, Res: 1, LinkMbps: 1000, Tests: []string{"throughput"},
		Progress: func(s string, _, _ int) { lines = append(lines, s) }})
	if err != nil {
		t.Fatal(err)
	}
	tp := rs[0].Throughput
	// A sender within 1% of the rate counts as having offered it (point's grace).
	if tp.FPS > f.capacity*1.01 || tp.FPS < f.capacity*0.99 || math.Abs(tp.Percent-10.47) > 0.11 {
		t.Fatalf("throughput %.0f fps (%.3f%%), want %.0f (10.47%%):\n%s", tp.FPS, tp.Percent, f.capacity, strings.Join(lines, "\n"))
	}
	if all := strings.Join(lines, "\n"); !strings.Contains(all, "100.000% again: the sender fell") || !strings.Contains(all, "sent only: the sender's reach bounds the search") {
		t.Errorf("progress:\n%s", all)
	}
	// The reach ends the search at once: no rate between it and line rate is tried
	// (a 10G port's CPU-bound sender searched for minutes).
	if !tp.SenderBound || len(tp.Trials) != 1 || f.calls != 3 {
		t.Errorf("sender bound %v after %d search steps and %d trials; want the search ended by the first step's 3 trials", tp.SenderBound, len(tp.Trials), f.calls)
	}
	if table := Table(rs); !strings.Contains(table, "the sender's reach: the path may carry more") {
		t.Errorf("table does not say the sender bounded it:\n%s", table)
	}
}

// TestProgressEstimate: Progress hears of every trial once, counted from 1; the
// estimate of all trials never falls below those run and, once a size is done, holds
// the next sizes to its pace: with sizes that behave alike it is exact from the second
// size on.
func TestProgressEstimate(t *testing.T) {
	f := &fakeLink{capacity: frames.LinePPS(1000, 64) * 0.6, buffer: 300}
	var dones, ests []int
	c := Config{Sizes: []int{64, 64, 64}, Trial: time.Second, Res: 1, Tests: AllTests, LinkMbps: 1000,
		Progress: func(_ string, done, est int) { dones, ests = append(dones, done), append(ests, est) }}
	if _, err := Run(context.Background(), f, c); err != nil {
		t.Fatal(err)
	}
	if len(dones) != f.trials {
		t.Fatalf("%d progress calls for %d trials", len(dones), f.trials)
	}
	per := f.trials / 3
	for i, d := range dones {
		if d != i+1 || ests[i] < d {
			t.Fatalf("call %d: done %d, estimate %d", i, d, ests[i])
		}
		if i >= per && ests[i] != f.trials {
			t.Errorf("trial %d (size 2 or 3): estimate %d, want %d", d, ests[i], f.trials)
		}
	}
	// The first size's estimate, before any size set the pace, is of the right order.
	if e := ests[0]; e < f.trials/2 || e > f.trials*2 {
		t.Errorf("first estimate %d for %d trials", e, f.trials)
	}
}
