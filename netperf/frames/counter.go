package frames

import (
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// window is how far back (in sequence numbers) duplicates are told from late frames.
const window = 1 << 16

// Counter is the sink's accounting of one stream. Add never allocates.
type Counter struct {
	Stream uint16
	// Stats so far; lost is computed in Result.
	Received, Reordered, Duplicated, Corrupted, Foreign, Bytes uint64
	highest                                                    int64 // highest sequence seen, extended to 64 bits; -1 before the first
	seen                                                       [window / 64]uint64
	sent                                                       uint64 // from the end marker
	sawEnd                                                     bool
	reflectorDrops                                             uint64 // the reflector's latest drop report
	first, last                                                int64  // RX times of the first and last frame, ns
	lat                                                        *hdrhistogram.Histogram
	// HW, when set, takes the frames' hardware RX stamps (see HWBook); frames with a
	// hardware stamp then add no software latency.
	HW *HWBook
}

// NewCounter returns the accounting of a stream, with latencies from 1 ns to 100 s.
func NewCounter(stream uint16) *Counter {
	return &Counter{Stream: stream, highest: -1, lat: hdrhistogram.New(1, 100e9, 3)}
}

// Add accounts one received frame of length n (without FCS) received at rxNanos
// (CLOCK_REALTIME, as the TX stamp).
func (c *Counter) Add(f []byte, rxNanos int64) {
	in, k := Parse(f)
	c.AddParsed(in, k, len(f), rxNanos, false)
}

// AddParsed is Add for a frame already parsed; hw says rxNanos is the NIC's hardware
// stamp, not the kernel's software one.
func (c *Counter) AddParsed(in Info, k Kind, n int, rxNanos int64, hw bool) {
	if k == Foreign || in.Stream != c.Stream {
		c.Foreign++
		return
	}
	switch k {
	case Corrupt:
		c.Corrupted++
		return
	case End:
		c.sent, c.sawEnd = in.Sent, true
		return
	case DropReport:
		// Cumulative, and reports can arrive out of order: the highest is the latest.
		c.reflectorDrops = max(c.reflectorDrops, in.Sent)
		return
	}
	// Extend the 32-bit sequence around the highest seen.
	var seq int64
	if c.highest < 0 {
		seq = int64(in.Seq)
	} else {
		seq = c.highest + int64(int32(in.Seq-uint32(c.highest)))
		if seq < 0 {
			seq = int64(in.Seq)
		}
	}
	switch {
	case seq > c.highest:
		gap := seq - c.highest
		if c.highest < 0 || gap >= window {
			clear(c.seen[:])
		} else {
			for s := c.highest + 1; s < seq; s++ {
				c.seen[(s%window)/64] &^= 1 << (s % 64)
			}
		}
		c.highest = seq
	case c.highest-seq >= window:
		// Too late to tell a duplicate from a reordered frame: counted as reordered.
		c.Reordered++
		c.count(in, n, rxNanos, hw)
		return
	default:
		if c.seen[(seq%window)/64]&(1<<(seq%64)) != 0 {
			c.Duplicated++
			return
		}
		c.Reordered++
	}
	c.seen[(seq%window)/64] |= 1 << (seq % 64)
	c.count(in, n, rxNanos, hw)
}

func (c *Counter) count(in Info, n int, rxNanos int64, hw bool) {
	c.Received++
	c.Bytes += uint64(n + FCS)
	if c.first == 0 {
		c.first = rxNanos
	}
	c.last = rxNanos
	if hw {
		if c.HW != nil && c.HW.Sampled(uint64(in.Seq)) {
			c.HW.RX(c.Stream, in.Seq, rxNanos)
		}
		return
	}
	d := (uint64(rxNanos) - in.TX) & (1<<48 - 1)
	if d < 100e9 {
		c.lat.RecordValue(int64(max(d, 1)))
	}
}

// SawEnd reports whether the end marker arrived, with the count it carried.
func (c *Counter) SawEnd() (uint64, bool) { return c.sent, c.sawEnd }

// Latency is a latency summary, ns.
type Latency struct {
	P50  int64 `json:"p50"`
	P90  int64 `json:"p90"`
	P99  int64 `json:"p99"`
	P999 int64 `json:"p999"`
	Max  int64 `json:"max"`
}

// Result is a stream's outcome, with the JSON keys of the CLI.
type Result struct {
	Stream     uint16   `json:"stream"`
	Sent       uint64   `json:"sent"`
	Received   uint64   `json:"received"`
	Lost       uint64   `json:"lost"`
	LossPct    float64  `json:"loss_pct"`
	Reordered  uint64   `json:"reordered"`
	Duplicated uint64   `json:"duplicated"`
	Corrupted  uint64   `json:"corrupted"`
	Foreign    uint64   `json:"foreign"`
	Seconds    float64  `json:"seconds"`
	PPS        float64  `json:"pps"`
	L2Mbps     float64  `json:"l2_mbps"`
	WireMbps   float64  `json:"wire_mbps"`
	Latency    *Latency `json:"latency_ns,omitempty"`
	// ReflectorDrops are frames the reflector had no TX room for (its drop reports):
	// lost, but not on the path. SenderDrops are frames the sending port's driver
	// refused (its tx_dropped rose); Offered is how many the trial asked the sender for.
	ReflectorDrops uint64 `json:"reflector_drops,omitempty"`
	SenderDrops    uint64 `json:"sender_drops,omitempty"`
	Offered        uint64 `json:"offered,omitempty"`
	// LatencyKind says what the latency measures: one-way (sender and sink share a clock)
	// or round-trip (through a reflector).
	LatencyKind string `json:"latency_kind,omitempty"`
	// LatencyClock says which stamps the latency comes from: "software" (the sender's
	// clock as it writes the frame, the kernel's as the frame arrives) or "hardware"
	// (the NIC's as the frame leaves and arrives). HWNote says why hardware stamps were
	// asked for and not had, or how many frames they paired.
	LatencyClock string `json:"latency_clock,omitempty"`
	HWNote       string `json:"hw_timestamps,omitempty"`

	// What Sum needs to merge results: the latencies and the span of the frames.
	lat         *hdrhistogram.Histogram
	first, last int64
	bytes       uint64
}

// Result sums up. sent is the count the sender reports when it is known (the same
// process, or an end marker); 0 means unknown: then frames 0..highest are expected.
// elapsed is the measuring time; 0 uses the span from the first to the last frame.
func (c *Counter) Result(sent uint64, elapsed time.Duration) Result {
	if sent == 0 && c.sawEnd {
		sent = c.sent
	}
	if sent == 0 && c.highest >= 0 {
		sent = uint64(c.highest + 1)
	}
	r := Result{Stream: c.Stream, Sent: sent, Received: c.Received, Reordered: c.Reordered, Duplicated: c.Duplicated, Corrupted: c.Corrupted, Foreign: c.Foreign,
		ReflectorDrops: c.reflectorDrops, lat: c.lat, first: c.first, last: c.last, bytes: c.Bytes}
	r.finish(sent, elapsed)
	return r
}

// finish computes loss, rates and percentiles from the counts.
func (r *Result) finish(sent uint64, elapsed time.Duration) {
	r.Sent = sent
	r.Lost, r.LossPct = 0, 0
	if sent > r.Received {
		r.Lost = sent - r.Received
	}
	if sent > 0 {
		r.LossPct = 100 * float64(r.Lost) / float64(sent)
	}
	secs := elapsed.Seconds()
	if elapsed == 0 && r.last > r.first && r.Received > 1 {
		// The span of n frames is n-1 gaps: scale it up to n.
		secs = float64(r.last-r.first) / 1e9 * float64(r.Received) / float64(r.Received-1)
	}
	r.Seconds = secs
	r.PPS, r.L2Mbps, r.WireMbps = 0, 0, 0
	if secs > 0 {
		r.PPS = float64(r.Received) / secs
		r.L2Mbps = float64(r.bytes) * 8 / secs / 1e6
		r.WireMbps = float64(r.bytes+r.Received*WireOverhead) * 8 / secs / 1e6
	}
	r.Latency = nil
	if r.lat != nil && r.lat.TotalCount() > 0 {
		r.Latency = latency(r.lat)
	}
}

// latency reads the percentiles and the maximum off h in one pass over its buckets
// (ValueAtPercentiles: the maximum is its 100th percentile, the bucket Max reads).
// Asked one by one, each walked the buckets from the start: on the emulated ZC702 a
// trial's result took 34 ms, as long as its frames' last 5 ms and its rings' closing.
func latency(h *hdrhistogram.Histogram) *Latency {
	v := h.ValueAtPercentiles([]float64{50, 90, 99, 99.9, 100})
	return &Latency{P50: v[50], P90: v[90], P99: v[99], P999: v[99.9], Max: v[100]}
}

// Merge adds o, the same stream's accounting from another receive ring (sink --cpus N:
// the port's frames fanned out over N rings by flow), into c. Reordering and duplicates
// stay as each ring counted them: a flow's frames all go to one ring, so its order is
// whole there. The merged counter is for Result, not for more Adds.
func (c *Counter) Merge(o *Counter) {
	c.Received += o.Received
	c.Reordered += o.Reordered
	c.Duplicated += o.Duplicated
	c.Corrupted += o.Corrupted
	c.Foreign += o.Foreign
	c.Bytes += o.Bytes
	c.highest = max(c.highest, o.highest)
	if o.sawEnd {
		c.sent, c.sawEnd = max(c.sent, o.sent), true
	}
	c.reflectorDrops = max(c.reflectorDrops, o.reflectorDrops)
	if o.first != 0 && (c.first == 0 || o.first < c.first) {
		c.first = o.first
	}
	c.last = max(c.last, o.last)
	c.lat.Merge(o.lat)
}

// Sum is the results of several streams (one a sender: gen --cpus N) taken as one: the
// counts added, latencies merged, rates over the given elapsed time (0: the span from
// the first frame of any stream to the last of any). Stream is the first one's.
func Sum(rs []Result, elapsed time.Duration) Result {
	if len(rs) == 0 {
		return Result{}
	}
	t := Result{Stream: rs[0].Stream, LatencyKind: rs[0].LatencyKind}
	if len(rs) == 1 {
		t.lat = rs[0].lat // a stream's sum is itself: no histogram to allocate and merge into
	} else {
		t.lat = hdrhistogram.New(1, 100e9, 3)
	}
	var sent uint64
	for _, r := range rs {
		sent += r.Sent
		t.Received += r.Received
		t.Reordered += r.Reordered
		t.Duplicated += r.Duplicated
		t.Corrupted += r.Corrupted
		t.Foreign += r.Foreign
		t.ReflectorDrops += r.ReflectorDrops
		t.SenderDrops += r.SenderDrops
		t.Offered += r.Offered
		t.bytes += r.bytes
		if r.lat != nil && len(rs) > 1 {
			t.lat.Merge(r.lat)
		}
		if r.first != 0 && (t.first == 0 || r.first < t.first) {
			t.first = r.first
		}
		t.last = max(t.last, r.last)
	}
	t.finish(sent, elapsed)
	return t
}

// PathLost is the frames lost on the path: lost less those the sending port's driver and
// the reflector dropped themselves.
func (r Result) PathLost() uint64 {
	return r.Lost - min(r.Lost, r.SenderDrops+r.ReflectorDrops)
}

// PathLossPct is PathLost as a percentage of the frames sent.
func (r Result) PathLossPct() float64 {
	if r.Sent == 0 {
		return 0
	}
	return 100 * float64(r.PathLost()) / float64(r.Sent)
}

// Streams is a sink's accounting of the streams Base..Base+len(C)-1: one a sender when
// a generator runs several (gen --cpus N gives each sender its own stream, so each
// stream's sequence stays whole). Add parses a frame once and hands it to its stream's
// counter; a frame of no stream here is counted in Foreign. Made by AnyStreams, it
// counts every stream it sees instead, a counter made at a stream's first frame, C in
// the order they came.
type Streams struct {
	Base    uint16
	C       []*Counter
	Foreign uint64
	// Any: every stream, up to max; slot[id] is id's index in C plus one (0: not seen).
	// An array indexed by the stream, not a map: one load a frame on a board's core.
	any  bool
	max  int
	slot []uint16
	hw   *HWBook
	// Over is the test frames of streams past the max (counted in Foreign too).
	Over uint64
}

// NewStreams returns the accounting of n streams from base.
func NewStreams(base uint16, n int) *Streams {
	s := &Streams{Base: base}
	for i := 0; i < n; i++ {
		s.C = append(s.C, NewCounter(base+uint16(i)))
	}
	return s
}

// MaxAnyStreams bounds the streams AnyStreams counts: each counter holds a histogram
// and a reorder window (about 40 KB), and a port carrying frames of any stream id
// must not make a sink allocate 65,536 of them.
const MaxAnyStreams = 256

// AnyStreams returns the accounting of every stream that arrives, the first max of them
// (at most MaxAnyStreams); frames of later streams are Foreign and Over.
func AnyStreams(max int) *Streams {
	if max <= 0 || max > MaxAnyStreams {
		max = MaxAnyStreams
	}
	return &Streams{any: true, max: max, slot: make([]uint16, 1<<16)}
}

// Any says the accounting takes every stream (AnyStreams).
func (s *Streams) Any() bool { return s.any }

// Add accounts one received frame; hw says rxNanos is the NIC's hardware stamp.
func (s *Streams) Add(f []byte, rxNanos int64, hw bool) {
	in, k := Parse(f)
	if k == Foreign {
		s.Foreign++
		return
	}
	if s.any {
		if c := s.counter(in.Stream); c != nil {
			c.AddParsed(in, k, len(f), rxNanos, hw)
			return
		}
		s.Over++
		s.Foreign++
		return
	}
	if i := int(in.Stream - s.Base); i < len(s.C) {
		s.C[i].AddParsed(in, k, len(f), rxNanos, hw)
		return
	}
	s.Foreign++
}

// counter is stream id's counter, made at its first frame while there is room.
func (s *Streams) counter(id uint16) *Counter {
	if j := s.slot[id]; j != 0 {
		return s.C[j-1]
	}
	if len(s.C) >= s.max {
		return nil
	}
	c := NewCounter(id)
	c.HW = s.hw
	s.C = append(s.C, c)
	s.slot[id] = uint16(len(s.C))
	return c
}

// SetHW has every stream's counter pair its hardware stamps in b.
func (s *Streams) SetHW(b *HWBook) {
	s.hw = b
	for _, c := range s.C {
		c.HW = b
	}
}

// Received is the frames of every stream received so far.
func (s *Streams) Received() uint64 {
	var n uint64
	for _, c := range s.C {
		n += c.Received
	}
	return n
}

// Corrupted is the frames of every stream whose payload checksum failed.
func (s *Streams) Corrupted() uint64 {
	var n uint64
	for _, c := range s.C {
		n += c.Corrupted
	}
	return n
}

// Merge adds o, the same streams' accounting from another receive ring. Counting every
// stream, a stream o saw and s did not joins s while there is room (its frames are
// Over and Foreign past the max), and C is sorted by stream.
func (s *Streams) Merge(o *Streams) {
	s.Foreign += o.Foreign
	s.Over += o.Over
	if !s.any {
		for i, c := range s.C {
			c.Merge(o.C[i])
		}
		return
	}
	for _, c := range o.C {
		if j := s.slot[c.Stream]; j != 0 {
			s.C[j-1].Merge(c)
			continue
		}
		if len(s.C) >= s.max {
			s.Over += c.Received
			s.Foreign += c.Received
			continue
		}
		s.C = append(s.C, c)
		s.slot[c.Stream] = uint16(len(s.C))
	}
	s.sort()
}

// sort puts the streams counted as they came in the order of their ids.
func (s *Streams) sort() {
	if !s.any {
		return
	}
	slices.SortFunc(s.C, func(a, b *Counter) int { return int(a.Stream) - int(b.Stream) })
	for i, c := range s.C {
		s.slot[c.Stream] = uint16(i + 1)
	}
}

// Result is each stream's result and their sum (see Sum). sent[i] is the count stream
// i's sender reports, when known (the same process); nil or 0 takes it from the end
// marker or the highest sequence, as Counter.Result does. Frames of no stream here are
// the sum's Foreign.
func (s *Streams) Result(sent []uint64, elapsed time.Duration) (Result, []Result) {
	s.sort()
	per := make([]Result, len(s.C))
	for i, c := range s.C {
		var n uint64
		if i < len(sent) {
			n = sent[i]
		}
		per[i] = c.Result(n, elapsed)
	}
	t := Sum(per, elapsed)
	t.Foreign += s.Foreign
	return t, per
}
