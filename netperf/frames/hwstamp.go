package frames

import (
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// HWBook pairs the hardware timestamps of a trial's frames: the TX stamp the sending
// NIC took as each frame left (read back from the TX ring) and the RX stamp it took as
// the frame came back through the reflector, both from the port's own clock (its PTP
// hardware clock), so their difference is the round trip on the wire, without the
// software time on either side. The frame's in-payload TX stamp is CLOCK_REALTIME and
// cannot be paired with a hardware RX stamp, so in hardware mode a frame's latency comes
// from here or not at all. One frame in Every is paired, so a long trial at a high
// rate holds at most about 100,000 of each in memory.
type HWBook struct {
	Every uint64
	mu    sync.Mutex
	tx    map[hwKey]int64
	rx    map[hwKey]int64
}

type hwKey struct {
	stream uint16
	seq    uint32
}

// NewHWBook keeps the stamps of one frame in every (1 or more).
func NewHWBook(every uint64) *HWBook {
	return &HWBook{Every: max(every, 1), tx: map[hwKey]int64{}, rx: map[hwKey]int64{}}
}

// Sampled says whether frame seq's stamps are kept.
func (b *HWBook) Sampled(seq uint64) bool { return seq%b.Every == 0 }

// TX records the NIC's TX stamp of a frame, as the sender's ring hands it back.
func (b *HWBook) TX(stream uint16, seq uint32, nanos int64) {
	b.mu.Lock()
	b.tx[hwKey{stream, seq}] = nanos
	b.mu.Unlock()
}

// RX records the NIC's RX stamp of a frame.
func (b *HWBook) RX(stream uint16, seq uint32, nanos int64) {
	b.mu.Lock()
	b.rx[hwKey{stream, seq}] = nanos
	b.mu.Unlock()
}

// Latency is the paired frames' latency summary and how many frames were paired; nil
// when none was (the NIC stamped none of them: the result falls back to software).
func (b *HWBook) Latency() (*Latency, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := hdrhistogram.New(1, 100e9, 3)
	n := 0
	for k, rx := range b.rx {
		tx, ok := b.tx[k]
		if !ok || rx < tx || rx-tx >= 100e9 {
			continue
		}
		h.RecordValue(max(rx-tx, 1))
		n++
	}
	if n == 0 {
		return nil, 0
	}
	return latency(h), n
}
