package rawsock

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/zynqnet/linerate/netperf/frames"
)

// TestLinearTXRule: a ring sends linear (a virtio_net_hdr before each frame) on Linux
// 4.6 and later, and only where no frame it takes could be longer than the port's MTU
// and Ethernet header (the kernel skips that check for such frames); a frame longer
// than txLinearMax keeps only its headers in the head.
func TestLinearTXRule(t *testing.T) {
	for _, c := range []struct {
		release     string
		mtu, maxLen int
		want        bool
	}{
		{"6.18.44-fc-v1272", 1500, 1514, true},
		{"6.1.0-57-arm64", 1500, 1514, true},
		{"4.6.0", 1500, 60, true},
		{"4.19.0-xilinx-v2019.1", 9000, 9014, true},
		{"4.5.7", 1500, 1514, false}, // tpacket_snd sent the header as frame data
		{"3.10.0-1160.el7.x86_64", 1500, 1514, false},
		{"6.1.0", 1500, 1518, false}, // a VLAN-tagged frame's 4 more bytes: the kernel checks it
		{"6.1.0", 1400, 1514, false},
		{"", 1500, 1514, false},
		{"linux", 1500, 1514, false},
	} {
		if got := linearTX(c.release, c.mtu, c.maxLen); got != c.want {
			t.Errorf("linearTX(%q, mtu %d, %d) = %v, want %v", c.release, c.mtu, c.maxLen, got, c.want)
		}
	}
	for n, want := range map[int]int{60: 60, 1514: 1514, txLinearMax: txLinearMax, txLinearMax + 1: txHeaders, 9014: txHeaders} {
		if got := linearLen(n); got != want {
			t.Errorf("linearLen(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestLinearTX: on veth a ring that sends linear puts every frame on the wire as it was
// written, the short, the full-sized and (MTU 9000) the jumbo one past txLinearMax whose
// headers alone go into the head; a ring whose frames could pass the MTU sends them
// without the header, as before.
func TestLinearTX(t *testing.T) {
	a, b, macA, macB := pair(t)
	rx := openRX(t, b, "b0")
	send := func(tx *TX, sizes []int) {
		t.Helper()
		var want [][]byte
		for i, n := range sizes {
			fr := make([]byte, n)
			for j := range fr {
				fr[j] = byte(rand.N(256))
			}
			copy(fr, macB)
			copy(fr[6:], macA)
			binary.BigEndian.PutUint16(fr[12:], 0x88b5) // local experimental
			fr[14] = byte(i)
			slot, err := tx.Slot()
			if err != nil || slot == nil {
				t.Fatalf("slot: %v", err)
			}
			tx.Commit(copy(slot, fr))
			want = append(want, fr)
		}
		if err := tx.Flush(); err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		for deadline := time.Now().Add(5 * time.Second); len(got) < len(want) && time.Now().Before(deadline); {
			if _, err := rx.Poll(100*time.Millisecond, func(fr []byte, _ int64, _ bool) {
				if len(fr) >= 14 && binary.BigEndian.Uint16(fr[12:]) == 0x88b5 {
					got = append(got, bytes.Clone(fr))
				}
			}); err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d of %d frames came", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("frame %d (%d bytes) came as %d bytes, not as sent", i, len(want[i]), len(got[i]))
			}
		}
	}
	tx := openTX(t, a, "a0", 1514)
	if !tx.Linear() {
		t.Fatal("a ring of frames up to 1514 bytes on a 1500-byte MTU does not send linear")
	}
	send(tx, []int{60, 61, 1000, 1514})
	if plain := openTX(t, a, "a0", 1518); plain.Linear() {
		t.Error("a ring of frames up to 1518 bytes on a 1500-byte MTU sends linear: the kernel would not check their length")
	} else {
		send(plain, []int{60, 1514})
	}
	a.Exec(t, "ip", "link", "set", "a0", "mtu", "9000")
	b.Exec(t, "ip", "link", "set", "b0", "mtu", "9000")
	jumbo := openTX(t, a, "a0", 9014)
	if !jumbo.Linear() {
		t.Fatal("a ring of frames up to 9014 bytes on a 9000-byte MTU does not send linear")
	}
	send(jumbo, []int{60, txLinearMax, txLinearMax + 1, 4000, 9014})
}

// TestKeptSlots: a small linear ring's slots keep their frames lap after lap: a frame
// stamped in place (Holds) arrives byte for byte as Frame builds it, the checksum
// offload's field aside, over IMIX and three flows and across a second builder; a
// slot a plain Commit sent something else through holds no key; a ring that does not
// send linear, or a frame past txLinearMax, keeps nothing.
func TestKeptSlots(t *testing.T) {
	a, b, macA, macB := pair(t)
	rx := openRX(t, b, "b0")
	var tx *TX
	a.Do(t, func() (err error) { tx, err = OpenTX("a0", 1514, 1, true); return })
	defer tx.Close()
	if !tx.Linear() {
		t.Fatal("a ring of frames up to 1514 bytes on a 1500-byte MTU does not send linear")
	}
	// The first builder's frames repeat every 4 (two flows, a cycle of four sizes), a
	// divisor of the ring's 128 slots, so a slot gets the same template lap after lap;
	// the second's every 12 (IMIX, three flows): never, and it must come out as built
	// all the same.
	spec := frames.Spec{Src: macA, Dst: macB, Sizes: []int{64, 1518, 594, 64}, Flows: 2, Stream: 5}
	first, _ := frames.NewBuilder(spec)
	spec.Sizes, spec.Flows, spec.Stream = frames.IMIX, 3, 6
	second, _ := frames.NewBuilder(spec)
	const n = 1500 // about 12 laps of the ring's 128 slots, then the second builder's
	sent := map[[2]uint64][]byte{}
	held, plain := 0, 0
	for i := 0; i < 2*n; i++ {
		bl, seq := first, uint64(i)
		if i >= n {
			bl, seq = second, uint64(i-n)
		}
		slot := waitSlot(t, tx)
		if i%97 == 96 { // something else through this slot
			fr := make([]byte, 60)
			copy(fr, macB)
			copy(fr[6:], macA)
			binary.BigEndian.PutUint16(fr[12:], 0x88b5)
			tx.Commit(copy(slot, fr))
			plain++
			continue
		}
		key, ts := bl.Key(seq), rand.Int64()
		l := 0
		if tx.Holds(key) {
			l = bl.Stamp(slot, seq, ts)
			held++
		} else {
			l = bl.Frame(slot, seq, ts)
		}
		tx.CommitAs(l, key)
		want := make([]byte, l)
		bl.Frame(want, seq, ts)
		sent[[2]uint64{uint64(bl.Spec().Stream), seq}] = want
		if i%16 == 15 {
			if err := tx.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Flush(); err != nil {
		t.Fatal(err)
	}
	if tx.Frames() != 128 || held < n*8/10 || held >= n {
		t.Errorf("%d of %d frames stamped in place (ring of %d): want most of the first builder's, none of the second's", held, 2*n-plain, tx.Frames())
	}
	got, others := 0, 0
	for deadline := time.Now().Add(5 * time.Second); got+others < 2*n && time.Now().Before(deadline); {
		if _, err := rx.Poll(100*time.Millisecond, func(fr []byte, _ int64, _ bool) {
			if len(fr) >= 14 && binary.BigEndian.Uint16(fr[12:]) == 0x88b5 {
				others++
				return
			}
			in, k := frames.Parse(fr)
			want, ok := sent[[2]uint64{uint64(in.Stream), uint64(in.Seq)}]
			if k != frames.Data || !ok {
				return
			}
			// The UDP checksum field (bytes 40-41) holds what the offload left there.
			if !bytes.Equal(fr[:40], want[:40]) || !bytes.Equal(fr[42:], want[42:]) {
				t.Errorf("stream %d frame %d came other than built", in.Stream, in.Seq)
			}
			got++
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got != 2*n-plain || others != plain {
		t.Fatalf("%d test frames and %d others came, want %d and %d", got, others, 2*n-plain, plain)
	}

	notLinear := openTX(t, a, "a0", 1518)
	if notLinear.Holds(first.Key(0)) {
		t.Error("a ring that does not send linear holds a key")
	}
	a.Exec(t, "ip", "link", "set", "a0", "mtu", "9000")
	b.Exec(t, "ip", "link", "set", "b0", "mtu", "9000")
	jumbo := openTX(t, a, "a0", 9014)
	big, _ := frames.NewBuilder(frames.Spec{Src: macA, Dst: macB, Sizes: []int{4000}, Flows: 1})
	for seq := uint64(0); seq < uint64(2*jumbo.Frames()+1); seq++ {
		slot := waitSlot(t, jumbo)
		if jumbo.Holds(big.Key(seq)) {
			t.Fatal("a slot keeps a 4000-byte frame, past txLinearMax (the kernel hangs it on the ring's page)")
		}
		jumbo.CommitAs(big.Frame(slot, seq, 0), big.Key(seq))
		if err := jumbo.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

// waitSlot is the ring's next free slot, once the kernel has sent what holds it.
func waitSlot(t *testing.T, tx *TX) []byte {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		slot, err := tx.Slot()
		if err != nil {
			t.Fatal(err)
		}
		if slot != nil {
			return slot
		}
		tx.Flush()
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no free slot in 5 s")
	return nil
}
