package rawsock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/zynqnet/linerate/netperf/frames"
)

// checksum is the Internet checksum of parts as UDP sends it: the one's-complement sum,
// folded and complemented; a 0 goes as all ones.
func checksum(parts ...[]byte) uint16 {
	var sum uint32
	for _, b := range parts {
		for ; len(b) >= 2; b = b[2:] {
			sum += uint32(b[0])<<8 | uint32(b[1])
		}
		if len(b) == 1 {
			sum += uint32(b[0]) << 8
		}
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	if c := ^uint16(sum); c != 0 {
		return c
	}
	return 0xffff
}

// finish is what a port that offloads does to a partial frame (and the kernel's
// skb_checksum_help where it cannot): the checksum from start to the frame's end, the
// field included, into the field.
func finish(f []byte, start int) {
	binary.BigEndian.PutUint16(f[start+udpCsumOff:], checksum(f[start:]))
}

func testBuilder(t testing.TB, sizes []int, vlan int) *frames.Builder {
	t.Helper()
	b, err := frames.NewBuilder(frames.Spec{
		Src: net.HardwareAddr{2, 0, 0, 0, 0, 1}, Dst: net.HardwareAddr{2, 0, 0, 0, 0, 2},
		SrcIP: netip.MustParseAddr("198.18.9.1"), DstIP: netip.MustParseAddr("198.18.9.2"),
		VLAN: vlan, Sizes: sizes, Flows: 3, Stream: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPartialUDP: a test frame readied for offload and finished as a port finishes it
// is the frame as built, byte for byte, whatever its size, sequence number and stamp;
// frames that do not qualify are left as they are.
func TestPartialUDP(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	b := testBuilder(t, append([]int{64, 65, 1518, 9018}, frames.IMIX...), 0)
	buf := make([]byte, frames.MaxSize)
	for i := 0; i < 3000; i++ {
		seq := r.Uint64()
		f := buf[:b.Frame(buf, seq, r.Int64())]
		want := bytes.Clone(f)
		start := partialUDP(f)
		if start != 34 {
			t.Fatalf("a %d-byte test frame: start %d, want 34", len(f), start)
		}
		finish(f, start)
		if !bytes.Equal(f, want) {
			t.Fatalf("a %d-byte test frame finished: UDP checksum %#04x, built with %#04x", len(f),
				binary.BigEndian.Uint16(f[start+udpCsumOff:]), binary.BigEndian.Uint16(want[start+udpCsumOff:]))
		}
	}
	f := buf[:b.EndFrame(buf, 12345)]
	want := bytes.Clone(f)
	if finish(f, partialUDP(f)); !bytes.Equal(f, want) {
		t.Fatal("the end marker finished is not the end marker built")
	}

	base := bytes.Clone(buf[:b.Frame(buf, 1, 2)])
	tagged := testBuilder(t, []int{68}, 100)
	no := map[string][]byte{
		"VLAN-tagged": buf[:tagged.Frame(buf, 1, 2)],
		"short":       base[:40],
	}
	mod := func(name string, fn func(f []byte) []byte) { no[name] = fn(bytes.Clone(base)) }
	mod("IPv6 ethertype", func(f []byte) []byte { f[12], f[13] = 0x86, 0xdd; return f })
	mod("IP version 6", func(f []byte) []byte { f[14] = 0x65; return f })
	mod("IHL below 5", func(f []byte) []byte { f[14] = 0x44; return f })
	mod("TCP", func(f []byte) []byte { f[23] = 6; return f })
	mod("more fragments", func(f []byte) []byte { f[20] |= 0x20; return f })
	mod("a later fragment", func(f []byte) []byte { f[21] = 1; return f })
	mod("padded", func(f []byte) []byte { return append(f, 0, 0) })
	mod("IP length past the frame", func(f []byte) []byte { f[17]++; return f })
	mod("UDP length not the IP payload's", func(f []byte) []byte { f[39]--; return f })
	mod("no checksum", func(f []byte) []byte { f[40], f[41] = 0, 0; return f })
	for name, f := range no {
		want := bytes.Clone(f)
		if start := partialUDP(f); start != 0 || !bytes.Equal(f, want) {
			t.Errorf("%s: start %d, frame changed %v; want 0, unchanged", name, start, !bytes.Equal(f, want))
		}
	}
}

// FuzzPartialUDP: any bytes: no panic, and a frame readied for offload and finished
// carries the UDP checksum computed from scratch (pseudo-header, header, data).
func FuzzPartialUDP(f *testing.F) {
	b := testBuilder(f, []int{64, 1518}, 0)
	buf := make([]byte, 2048)
	f.Add(bytes.Clone(buf[:b.Frame(buf, 0, 0)]))
	f.Add(bytes.Clone(buf[:b.Frame(buf, 1, 99)]))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, fr []byte) {
		start := partialUDP(fr)
		if start == 0 {
			return
		}
		finish(fr, start)
		want := bytes.Clone(fr)
		want[start+udpCsumOff], want[start+udpCsumOff+1] = 0, 0
		pseudo := append(append(bytes.Clone(want[26:34]), 0, 17), want[start+4:start+6]...)
		c := checksum(pseudo, want[start:])
		if got := binary.BigEndian.Uint16(fr[start+udpCsumOff:]); got != c {
			t.Fatalf("finished checksum %#04x, from scratch %#04x", got, c)
		}
	})
}

// TestCsumOffload: on veth (tx-checksumming on) a linear ring asks the port to finish
// its test frames' UDP checksums, and the peer's UDP takes every one; with
// tx-checksumming turned off under the ring the kernel finishes them itself and they
// arrive byte for byte as built, the peer's UDP taking every one (a wrong checksum it
// would drop); a ring opened on a port without the offload sends them as built.
func TestCsumOffload(t *testing.T) {
	a, b, macA, macB := pair(t)
	a.Exec(t, "ip", "addr", "add", "198.18.9.1/24", "dev", "a0")
	b.Exec(t, "ip", "addr", "add", "198.18.9.2/24", "dev", "b0")
	var conn *net.UDPConn
	b.Do(t, func() (err error) {
		conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(198, 18, 9, 2), Port: frames.DstPort})
		return
	})
	t.Cleanup(func() { conn.Close() })
	rx := openRX(t, b, "b0")
	bl, err := frames.NewBuilder(frames.Spec{Src: macA, Dst: macB, SrcIP: netip.MustParseAddr("198.18.9.1"),
		DstIP: netip.MustParseAddr("198.18.9.2"), Sizes: frames.IMIX, Flows: 2, Stream: 9})
	if err != nil {
		t.Fatal(err)
	}
	send := func(name string, tx *TX, exact bool) {
		t.Helper()
		const n, batch = 200, 20 // a batch the UDP socket's buffer holds
		var want [][]byte
		datagrams := 0
		dg := make([]byte, 2048)
		for i := 0; i < n; i += batch {
			for j := i; j < i+batch; j++ {
				slot, err := tx.Slot()
				if err != nil || slot == nil {
					t.Fatalf("%s: slot: %v", name, err)
				}
				l := bl.Frame(slot, uint64(j), int64(j))
				want = append(want, bytes.Clone(slot[:l]))
				tx.Commit(l)
			}
			if err := tx.Flush(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			for ; datagrams < i+batch; datagrams++ {
				if _, err := conn.Read(dg); err != nil {
					if !errors.Is(err, os.ErrDeadlineExceeded) {
						t.Fatal(err)
					}
					break
				}
			}
		}
		var got [][]byte
		for deadline := time.Now().Add(5 * time.Second); len(got) < n && time.Now().Before(deadline); {
			rx.Poll(100*time.Millisecond, func(fr []byte, _ int64, _ bool) {
				if _, k := frames.Parse(fr); k == frames.Data {
					got = append(got, bytes.Clone(fr))
				}
			})
		}
		if len(got) != n || datagrams != n {
			t.Fatalf("%s: %d of %d frames came, the peer's UDP took %d", name, len(got), n, datagrams)
		}
		for i := range got {
			if exact && !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s: frame %d (%d bytes) came other than built", name, i, len(want[i]))
			}
		}
	}
	tx := openTX(t, a, "a0", 1514)
	if !tx.CsumOffload() {
		t.Fatal("a linear ring on veth (tx-checksumming on) does not offload the UDP checksum")
	}
	send("offloaded", tx, false)
	a.Exec(t, "ethtool", "-K", "a0", "tx", "off")
	send("finished by the kernel", tx, true)
	plain := openTX(t, a, "a0", 1514)
	if plain.CsumOffload() {
		t.Fatal("a ring opened with tx-checksumming off offloads the UDP checksum")
	}
	send("without offload", plain, true)
}
