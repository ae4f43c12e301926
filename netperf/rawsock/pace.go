package rawsock

import (
	"sync"
	"time"
)

// pacer is the senders' shared schedule. Frame i of the run, counting every sender's
// frames together, is due at i/FPS seconds, so the total rate is exact whatever the
// timer's resolution and however the frames fall to the senders. A run the CPU left
// behind (a busy machine) catches up at 150% of the rate through one token bucket of
// 10 ms of frames, shared, so several senders never catch up in one burst together that
// would overflow a queue the test did not mean to measure (a veth backlog holds 1000
// frames); 10 ms, not less, so that a batch still keeps the rate when each send() takes
// milliseconds on a loaded CPU.
type pacer struct {
	fps      float64
	count    uint64
	duration time.Duration
	start    time.Time
	now      func() time.Time // time.Now; a test's clock

	mu      sync.Mutex
	claimed uint64
	tokens  float64
	burst   float64
	last    time.Time
}

func newPacer(o GenOptions, start time.Time) *pacer {
	burst := max(o.FPS*0.010, 16)
	return &pacer{fps: o.FPS, count: o.Count, duration: o.Duration, start: start, now: time.Now, tokens: burst, burst: burst, last: start}
}

// claim grants a sender up to want frames to send now. With none to grant it says how
// long until the next is due (0: soon, yield), or that the run is over.
func (p *pacer) claim(want uint64) (n uint64, wait time.Duration, done bool) {
	now := p.now()
	el := now.Sub(p.start)
	if p.duration > 0 && el >= p.duration {
		return 0, 0, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	due := ^uint64(0)
	if p.fps > 0 {
		due = uint64(p.fps*el.Seconds()) + 1
	}
	if p.count > 0 {
		if p.claimed >= p.count {
			return 0, 0, true
		}
		due = min(due, p.count)
	}
	if due <= p.claimed {
		return 0, time.Duration(float64(p.claimed)/p.fps*1e9) - el, false
	}
	n = min(due-p.claimed, want)
	if p.fps > 0 {
		p.tokens = min(p.tokens+now.Sub(p.last).Seconds()*p.fps*1.5, p.burst)
		p.last = now
		if p.tokens < 1 {
			return 0, 0, false
		}
		n = min(n, uint64(p.tokens))
		p.tokens -= float64(n)
	}
	p.claimed += n
	return n, 0, false
}

// unclaim gives back frames a sender was granted but its ring had no room for.
func (p *pacer) unclaim(n uint64) {
	if n == 0 {
		return
	}
	p.mu.Lock()
	p.claimed -= n
	if p.fps > 0 {
		p.tokens = min(p.tokens+float64(n), p.burst)
	}
	p.mu.Unlock()
}
