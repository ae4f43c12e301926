package rawsock

import (
	"testing"
	"time"
)

// TestPacer: the senders' shared schedule, on a clock the test moves. Frame i is due at
// i/FPS; the first claim takes the bucket (10 ms of frames, at least 16); a run left
// behind catches up at 150% of the rate, never more than a bucket at once; a count or a
// duration ends it; frames a ring had no room for go back to the schedule and the
// bucket.
func TestPacer(t *testing.T) {
	type claim struct {
		at   time.Duration // since the start
		want uint64
		n    uint64
		wait time.Duration // when nothing is granted and the next frame is not yet due
		done bool
		back uint64 // unclaim after the claim
	}
	for _, c := range []struct {
		name   string
		o      GenOptions
		claims []claim
	}{
		{"the first claim is the bucket's worth, not more", GenOptions{FPS: 10000}, []claim{
			{at: 0, want: 1000, n: 1}, // one frame is due at t=0
			{at: 5 * time.Millisecond, want: 1000, n: 50},
			{at: 5 * time.Millisecond, want: 1000, wait: 100 * time.Microsecond}, // 51st due at 5.1 ms
		}},
		{"a small rate has a bucket of 16", GenOptions{FPS: 100}, []claim{
			{at: time.Second, want: 1000, n: 16},                        // 101 due, the bucket holds 16
			{at: time.Second + 100*time.Millisecond, want: 1000, n: 15}, // 0.1 s at 150%: 15 more
		}},
		{"behind, it catches up at 150% of the rate", GenOptions{FPS: 1000}, []claim{
			{at: 0, want: 1, n: 1},
			{at: time.Second, want: 5000, n: 16},                       // 1001 due: the bucket (16) first
			{at: time.Second + 20*time.Millisecond, want: 5000, n: 16}, // 20 ms at 1500/s: 30, capped at 16
			{at: time.Second + 30*time.Millisecond, want: 5000, n: 15},
		}},
		{"the count ends the run", GenOptions{FPS: 1000, Count: 20}, []claim{
			{at: 10 * time.Millisecond, want: 100, n: 11},
			{at: 40 * time.Millisecond, want: 100, n: 9}, // 41 due, 20 in all
			{at: 50 * time.Millisecond, want: 100, done: true},
		}},
		{"as fast as the rings drain, up to the count", GenOptions{Count: 100}, []claim{
			{at: 0, want: 64, n: 64},
			{at: 0, want: 64, n: 36},
			{at: 0, want: 64, done: true},
		}},
		{"the duration ends the run", GenOptions{FPS: 1000, Duration: time.Second}, []claim{
			{at: 999 * time.Millisecond, want: 10, n: 10},
			{at: time.Second, want: 10, done: true},
		}},
		{"frames a ring could not take go back", GenOptions{FPS: 1000, Count: 20}, []claim{
			{at: 10 * time.Millisecond, want: 100, n: 11, back: 5},
			{at: 10 * time.Millisecond, want: 100, n: 5},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Unix(1000, 0)
			now := start
			p := newPacer(c.o, start)
			p.now = func() time.Time { return now }
			for i, cl := range c.claims {
				now = start.Add(cl.at)
				n, wait, done := p.claim(cl.want)
				if n != cl.n || done != cl.done || (cl.n == 0 && !cl.done && wait != cl.wait) {
					t.Errorf("claim %d at %v: %d frames, wait %v, done %v; want %d, %v, %v", i, cl.at, n, wait, done, cl.n, cl.wait, cl.done)
				}
				p.unclaim(cl.back)
			}
		})
	}
}
