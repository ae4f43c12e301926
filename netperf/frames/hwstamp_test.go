package frames

import "testing"

// TestHWBookPairs: the book pairs TX and RX stamps of sampled frames by stream and
// sequence; unpaired and backwards stamps are left out.
func TestHWBookPairs(t *testing.T) {
	b := NewHWBook(2)
	if !b.Sampled(4) || b.Sampled(5) {
		t.Fatal("one in two: 4 yes, 5 no")
	}
	b.TX(1, 0, 1000)
	b.RX(1, 0, 1000+8000)
	b.TX(1, 2, 2000)
	b.RX(1, 2, 2000+12000)
	b.RX(2, 2, 99999) // another stream's frame: no TX stamp
	b.TX(1, 4, 5000)
	b.RX(1, 4, 4000) // backwards: a clock step
	lat, n := b.Latency()
	if n != 2 || lat == nil || lat.P50 < 7990 || lat.P50 > 8010 || lat.Max < 11990 || lat.Max > 12010 {
		t.Fatalf("paired %d: %+v", n, lat)
	}
	if lat, n := NewHWBook(1).Latency(); lat != nil || n != 0 {
		t.Fatal("an empty book has no latency")
	}
}
