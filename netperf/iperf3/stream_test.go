package iperf3

import (
	"context"
	"slices"
	"testing"
	"time"
)

// The pacer's waits: one timer for all of them, a wait that ends at its time, and one
// the test's end or its context cuts short.
func TestPacer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	p := newPacer(ctx, stop)

	if !p.sleep(time.Microsecond) {
		t.Fatal("a 1 µs wait with nothing stopped: false")
	}
	if a := testing.AllocsPerRun(50, func() { p.sleep(time.Microsecond) }); a != 0 {
		t.Errorf("%v allocations a wait after the first: the timer is not reused", a)
	}
	begin := time.Now()
	if !p.until(begin, 1250, 1e6) || time.Since(begin) < 10*time.Millisecond {
		t.Errorf("until: 1250 bytes at 1 Mbit/s should be due 10 ms after start, waited %v", time.Since(begin))
	}
	if !p.until(begin.Add(-time.Hour), 1<<20, 1e6) || !p.until(begin, 1<<40, 0) {
		t.Error("until waited for a stream behind its rate, or for one without a rate")
	}

	// cutShort: an hour's wait of p, ended by end, returns false at once.
	cutShort := func(p *pacer, end func(), what string) {
		done := make(chan bool)
		go func() { done <- p.sleep(time.Hour) }()
		end()
		select {
		case ok := <-done:
			if ok {
				t.Errorf("a wait %s cut short returned true", what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not end an hour's wait", what)
		}
	}
	cutShort(p, func() { close(stop) }, "the test's end")
	p = newPacer(ctx, make(chan struct{}))
	p.sleep(time.Microsecond)
	cutShort(p, cancel, "the context's end")
	// A tick the last wait left unread (its timer fired, the wait had gone) is not
	// taken for the next wait's.
	p = newPacer(context.Background(), make(chan struct{}))
	p.sleep(time.Microsecond)
	p.timer.Reset(time.Microsecond)
	time.Sleep(5 * time.Millisecond)
	begin = time.Now()
	if !p.sleep(20*time.Millisecond) || time.Since(begin) < 20*time.Millisecond {
		t.Errorf("a 20 ms wait after an unread tick took %v", time.Since(begin))
	}
}

// TestStreamSocketAsStock: the numbers stock 3.12 printed, stock at both ends, for the
// streams of each kind of end (proto.go's streamSocket says how they were measured).
func TestStreamSocketAsStock(t *testing.T) {
	for _, c := range []struct {
		name              string
		server, udp, file bool
		want              []int
	}{
		{"client -P 12, --bidir -P 6, -u -P 6", false, false, false, []int{5, 7, 9, 12, 14, 16, 18, 20, 22, 24, 26, 28}},
		{"client -u -P 4", false, true, false, []int{5, 7, 9, 12}},
		{"client -F -P 5", false, false, true, []int{5, 8, 12, 15, 18}},
		{"server -P 12", true, false, false, []int{5, 8, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29}},
		{"server -F, -P 5", true, false, true, []int{5, 9, 13, 16, 19}},
		{"server -u -P 6", true, true, false, []int{5, 6, 9, 12, 14, 16}},
	} {
		var got []int
		for i := range c.want {
			got = append(got, streamSocket(i, c.server, c.udp, c.file))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v; stock printed %v", c.name, got, c.want)
		}
	}
}
