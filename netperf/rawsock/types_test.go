package rawsock

import "testing"

// TestPacedRing: a paced trial's ring holds a quarter of a second of its frames in
// blocks of twice their 2 ms (8 KiB to 64 KiB), at least 128 (256 ms of blocks retired
// by their 2 ms timer) and at most the line-rate ring's 32 MiB; an unknown rate, or a
// frame no such block holds, gets the line-rate ring.
func TestPacedRing(t *testing.T) {
	for _, c := range []struct {
		fps      float64
		frameLen int
		want     RXRing
	}{
		{5874, 508, RXRing{BlockSize: 16 << 10, Blocks: 128}},     // the emulated ZC702's PHY loopback: 11 in 2 ms, 27 a block
		{3499, 508, RXRing{BlockSize: 8 << 10, Blocks: 128}},      // 6 in 2 ms, 13 a block
		{1000, 508, RXRing{BlockSize: 8 << 10, Blocks: 128}},      // a frames step
		{23_500, 508, RXRing{BlockSize: 64 << 10, Blocks: 128}},   // a real board's loopback at 1 Gb/s: 47 frames in 2 ms
		{5000, 1514, RXRing{BlockSize: 32 << 10, Blocks: 128}},    // 10 full frames in 2 ms, 20 a block
		{1000, 1514, RXRing{BlockSize: 8 << 10, Blocks: 128}},     // 2 full frames in 2 ms, 5 a block
		{100_000, 508, RXRing{BlockSize: 64 << 10, Blocks: 228}},  // 25,000 frames a quarter second, 110 a block
		{1_488_095, 60, RXRing{BlockSize: 64 << 10, Blocks: 512}}, // 64-byte frames at 1 Gb/s: capped at 32 MiB
		{1000, 9000, RXRing{BlockSize: 64 << 10, Blocks: 128}},    // jumbo: 2 in 2 ms, 7 a block
		{0, 508, RXRing{}},       // a throughput search
		{1000, 65_500, RXRing{}}, // no 64 KiB block holds it
	} {
		if got := PacedRing(c.fps, c.frameLen); got != c.want {
			t.Errorf("PacedRing(%g, %d) = %+v, want %+v", c.fps, c.frameLen, got, c.want)
		}
	}
}
