package rawsock

import (
	"sync/atomic"
	"time"

	"github.com/zynqnet/linerate/netperf/frames"
)

// GenOptions bound and pace a run of Gen. A run ends at Count frames or after Duration,
// whichever comes first; at least one of them must be set.
type GenOptions struct {
	FPS        float64 // frames per second; 0 sends as fast as the ring drains
	Count      uint64
	Duration   time.Duration
	EndMarkers bool                                // tell the sink how many frames were sent
	Progress   func(sent uint64, el time.Duration) // about once a second
}

// GenStats is what Gen sent.
type GenStats struct {
	Sent    uint64
	Bytes   uint64 // with FCS
	Elapsed time.Duration
}

// SinkOptions bound a run of Sink: it ends at Duration, at Count frames of the stream,
// after the sender's end marker (plus Grace for late frames), or when ctx ends.
type SinkOptions struct {
	Duration time.Duration
	Count    uint64
	Grace    time.Duration
	Progress func(c *frames.Counter, el time.Duration)
	// Stop, when set, ends the run as soon as it reads true (the same-process sender
	// is done and its frames had time to arrive).
	Stop *atomic.Bool
	// Seen, when set, is kept at the count of the stream's frames received, for another
	// goroutine to watch.
	Seen *atomic.Uint64
}

// ReflectStats is what a reflector did.
type ReflectStats struct {
	Reflected uint64 `json:"reflected"`
	Foreign   uint64 `json:"foreign"`
	Dropped   uint64 `json:"dropped"`      // test frames the TX ring had no room for
	Reports   uint64 `json:"drop_reports"` // drop reports sent back to the senders
}
