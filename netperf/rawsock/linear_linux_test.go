package rawsock

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"
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
