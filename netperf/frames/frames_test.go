package frames

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

var (
	macA = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xa}
	macB = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xb}
)

func builder(t testing.TB, sizes []int, flows, vlan int) *Builder {
	t.Helper()
	b, err := NewBuilder(Spec{Src: macA, Dst: macB, Sizes: sizes, Flows: flows, VLAN: vlan, Stream: 7})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChecksums: every stamped frame decodes with gopacket with valid IPv4 and UDP
// checksums (recomputed from scratch), whatever the sequence number and timestamp.
func TestChecksums(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tagged := []int{68, 598, 1522}
	for _, vlan := range []int{0, 100} {
		sizes := IMIX
		if vlan != 0 {
			sizes = tagged
		}
		b := builder(t, sizes, 3, vlan)
		buf := make([]byte, 2048)
		for i := 0; i < 2000; i++ {
			seq, ts := r.Uint64(), r.Int64()
			n := b.Frame(buf, seq, ts)
			if n != b.FrameLen(seq) {
				t.Fatalf("length %d, FrameLen %d", n, b.FrameLen(seq))
			}
			checkFrame(t, buf[:n])
			in, k := Parse(buf[:n])
			if k != Data || in.Seq != uint32(seq) || in.TX != uint64(ts)&(1<<48-1) || in.Stream != 7 {
				t.Fatalf("parse: %v %+v (seq %d ts %d)", k, in, seq, ts)
			}
		}
		n := b.EndFrame(buf, 123456789012)
		checkFrame(t, buf[:n])
		if in, k := Parse(buf[:n]); k != End || in.Sent != 123456789012 {
			t.Fatalf("end marker: %v %+v", k, in)
		}
	}
}

// TestStampKept: a buffer that holds a frame of the same key, stamped in place, is
// byte for byte what Frame writes, over IMIX, flows and a VLAN, whatever frame of that
// key it held (its UDP checksum field as a ring's offload left it included: Stamp does
// not read it); keys tell templates and builders apart.
func TestStampKept(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, vlan := range []int{0, 100} {
		sizes := IMIX
		if vlan != 0 {
			sizes = []int{68, 598, 68, 1522}
		}
		b, other := builder(t, sizes, 3, vlan), builder(t, sizes, 3, vlan)
		keys := map[uint64]uint64{}  // key -> a seq of it
		pairs := map[[2]int]uint64{} // (flow, size) -> its key
		for seq := uint64(0); seq < uint64(3*len(sizes)); seq++ {
			k, p := b.Key(seq), [2]int{int(seq % 3), b.FrameLen(seq)}
			if k == 0 || k == other.Key(seq) {
				t.Fatalf("key %#x of seq %d: zero, or the other builder's (%#x)", k, seq, other.Key(seq))
			}
			if s, ok := keys[k]; ok && [2]int{int(s % 3), b.FrameLen(s)} != p {
				t.Fatalf("seq %d and %d share key %#x but not a template", s, seq, k)
			}
			if k2, ok := pairs[p]; ok && k2 != k {
				t.Fatalf("flow %d size %d under two keys, %#x and %#x", p[0], p[1], k2, k)
			}
			keys[k], pairs[p] = seq, k
		}
		kept, fresh := make([]byte, 2048), make([]byte, 2048)
		for i := 0; i < 3000; i++ {
			seq, ts := r.Uint64(), r.Int64()
			held := keys[b.Key(seq)] + uint64(3*len(sizes))*r.Uint64N(1000)
			b.Frame(kept, held, r.Int64())
			kept[len(kept)-1] = 0xee // past the frame: untouched
			n := b.Stamp(kept, seq, ts)
			if m := b.Frame(fresh, seq, ts); m != n || string(kept[:n]) != string(fresh[:n]) || kept[len(kept)-1] != 0xee {
				t.Fatalf("seq %d stamped over seq %d: differs from Frame's", seq, held)
			}
		}
	}
}

func checkFrame(t *testing.T, f []byte) {
	t.Helper()
	p := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
	ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
	if ip == nil || udp == nil {
		t.Fatalf("not IPv4/UDP: %v", p)
	}
	want := udp.Checksum
	ipsum := ip.Checksum
	// Recompute both from scratch with gopacket.
	udp.SetNetworkLayerForChecksum(ip)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ip, udp, gopacket.Payload(udp.Payload)); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	if got := binary.BigEndian.Uint16(out[20+6:]); got != want {
		t.Fatalf("UDP checksum %#04x, recomputed %#04x", want, got)
	}
	if got := binary.BigEndian.Uint16(out[10:]); got != ipsum {
		t.Fatalf("IPv4 checksum %#04x, recomputed %#04x", ipsum, got)
	}
}

func TestBuilderBad(t *testing.T) {
	for _, s := range []Spec{
		{Src: macA, Dst: macB, Sizes: []int{63}, Flows: 1},
		{Src: macA, Dst: macB, Sizes: []int{9019}, Flows: 1},
		{Src: macA, Dst: macB, Sizes: []int{64}, Flows: 1, VLAN: 5}, // 64 with a tag has no room
		{Src: macA, Dst: macB, Sizes: []int{64}, Flows: 0},
		{Src: macA, Dst: macB, Sizes: []int{64}, Flows: 1, VLAN: 4095},
		{Src: macA[:3], Dst: macB, Sizes: []int{64}, Flows: 1},
		{Src: macA, Dst: macB, Flows: 1},
	} {
		if _, err := NewBuilder(s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	if MinSizeFor(true) != 66 || MinSizeFor(false) != 64 {
		t.Errorf("MinSizeFor: %d %d", MinSizeFor(false), MinSizeFor(true))
	}
}

func TestParseCorruptAndForeign(t *testing.T) {
	b := builder(t, []int{128}, 1, 0)
	buf := make([]byte, 256)
	n := b.Frame(buf, 5, 99)
	for i := 42 + 4; i < n; i++ { // every payload byte but the magic
		if i == 42+14 || i == 42+15 {
			continue
		}
		f := append([]byte{}, buf[:n]...)
		f[i] ^= 0x10
		if _, k := Parse(f); k != Corrupt {
			t.Fatalf("flipped byte %d: %v, want Corrupt", i, k)
		}
	}
	arp := append([]byte{}, buf[:n]...)
	binary.BigEndian.PutUint16(arp[12:], 0x0806)
	other := append([]byte{}, buf[:n]...)
	binary.BigEndian.PutUint16(other[36:], 53) // UDP to another port
	for _, f := range [][]byte{arp, other, buf[:20], nil} {
		if _, k := Parse(f); k != Foreign {
			t.Errorf("%x: %v, want Foreign", f, k)
		}
	}
}

// feed runs a crafted sequence through a counter.
func feed(c *Counter, b *Builder, seqs ...uint64) {
	buf := make([]byte, 256)
	for _, s := range seqs {
		n := b.Frame(buf, s, 1000)
		c.Add(buf[:n], 1500)
	}
}

func TestCounter(t *testing.T) {
	b := builder(t, []int{64}, 1, 0)
	for _, tc := range []struct {
		name                   string
		seqs                   []uint64
		sent                   uint64
		recv, lost, reord, dup uint64
	}{
		{"in order", []uint64{0, 1, 2, 3, 4}, 5, 5, 0, 0, 0},
		{"loss in the middle", []uint64{0, 1, 3, 4}, 5, 4, 1, 0, 0},
		{"loss at the end, sent known", []uint64{0, 1, 2}, 5, 3, 2, 0, 0},
		{"late start: head lost", []uint64{3, 4}, 0, 2, 3, 0, 0},
		{"reordered", []uint64{0, 2, 1, 3}, 4, 4, 0, 1, 0},
		{"duplicated", []uint64{0, 1, 1, 2, 2, 2}, 3, 3, 0, 0, 3},
		{"late duplicate", []uint64{0, 1, 2, 3, 1}, 4, 4, 0, 0, 1},
		{"reordered then its duplicate", []uint64{0, 2, 1, 1}, 3, 3, 0, 1, 1},
		{"32-bit wrap", []uint64{1<<32 - 2, 1<<32 - 1, 1 << 32, 1<<32 + 1}, 0, 4, 1<<32 - 2, 0, 0},
		{"gap wider than the window", []uint64{0, 1, 200000, 200001}, 200002, 4, 199998, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCounter(7)
			feed(c, b, tc.seqs...)
			r := c.Result(tc.sent, time.Second)
			if r.Received != tc.recv || r.Lost != tc.lost || r.Reordered != tc.reord || r.Duplicated != tc.dup {
				t.Errorf("got received %d lost %d reordered %d duplicated %d, want %d %d %d %d", r.Received, r.Lost, r.Reordered, r.Duplicated, tc.recv, tc.lost, tc.reord, tc.dup)
			}
		})
	}
	// Other streams are foreign; corrupt frames are counted, not received; the end
	// marker gives the count sent.
	c := NewCounter(7)
	other, _ := NewBuilder(Spec{Src: macA, Dst: macB, Sizes: []int{64}, Flows: 1, Stream: 8})
	buf := make([]byte, 128)
	feed(c, b, 0, 1)
	n := other.Frame(buf, 2, 0)
	c.Add(buf[:n], 0)
	n = b.Frame(buf, 2, 0)
	buf[50] ^= 1
	c.Add(buf[:n], 0)
	n = b.EndFrame(buf, 10)
	c.Add(buf[:n], 0)
	r := c.Result(0, time.Second)
	if r.Foreign != 1 || r.Corrupted != 1 || r.Sent != 10 || r.Lost != 8 || r.Received != 2 {
		t.Errorf("%+v", r)
	}
	if r.Latency == nil || r.Latency.P50 != 500 || r.Latency.Max != 500 {
		t.Errorf("latency %+v, want 500 ns", r.Latency)
	}
	if r.PPS != 2 || r.L2Mbps != 2*64*8/1e6 || r.WireMbps != 2*84*8/1e6 {
		t.Errorf("rates %+v", r)
	}
}

func TestRates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		size float64
		fps  float64
	}{
		{"100%", 64, 1488095.238},
		{"100%", 1518, 81274.382},
		{"50%", 64, 744047.619},
		{"950Mbit", 1518, 77210.663},
		{"1Gbit", 64, 1488095.238},
		{"200kpps", 64, 200000},
		{"1.2Mpps", 64, 1200000},
		{"1000pps", 1518, 1000},
		{"84000bps", 64, 125},
		{"100M", 64, 148809.524}, // pktgen's rate: bit/s
		{"950Mbit/s", 1518, 77210.663},
		{"10MBps", 1000, 10000}, // trafgen's bytes/s
		{"64000B", 64, 1000},
		{"1MiB", 1024, 1024},
		{"5 kpps", 64, 5000},
	} {
		r, err := ParseRate(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		fps, err := r.FPS(1000, tc.size)
		if err != nil || fps < tc.fps-0.01 || fps > tc.fps+0.01 {
			t.Errorf("%s at %v B: %v fps %v, want %v", tc.in, tc.size, fps, err, tc.fps)
		}
	}
	for _, bad := range []string{"", "fast", "0%", "-5%", "950", "1e3xpps", "abcMbit", "NaN%", "nan%", "Inf%", "+Inf%",
		"NaNpps", "infMbit", "0x10pps", "1e400Mbit", "0pps", "0.0Mbit", "1_000pps", "10Mbyte", "%"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, over := range []string{"101%", "1.1Gbit", "1.5Mpps", "200MBps", "1.1G"} {
		r, err := ParseRate(over)
		if err == nil {
			_, err = r.FPS(1000, 64)
		}
		if err == nil {
			t.Errorf("%s on 1 GbE at 64 B accepted", over)
		}
	}
	if s, err := ParseSizes("imix"); err != nil || len(s) != 12 {
		t.Errorf("imix: %v %v", s, err)
	}
	if b := builder(t, IMIX, 1, 0); b.AvgSize() < 361.8 || b.AvgSize() > 361.9 {
		t.Errorf("IMIX average %v", b.AvgSize())
	}
}

// FuzzParse: any frame is classified without a panic, and a frame the parser calls Data
// re-stamped by nobody stays Data when parsed again.
func FuzzParse(f *testing.F) {
	b := builder(f, []int{64, 1518}, 2, 0)
	buf := make([]byte, 2048)
	f.Add(append([]byte{}, buf[:b.Frame(buf, 1, 2)]...))
	f.Add(append([]byte{}, buf[:b.Frame(buf, 2, 2)]...))
	f.Add(append([]byte{}, buf[:b.EndFrame(buf, 9)]...))
	bv := builder(f, []int{128}, 1, 42)
	f.Add(append([]byte{}, buf[:bv.Frame(buf, 3, 4)]...))
	f.Fuzz(func(t *testing.T, frame []byte) {
		in, k := Parse(frame)
		c := NewCounter(in.Stream)
		c.AddParsed(in, k, len(frame), 1, false)
		if in2, k2 := Parse(frame); k2 != k || in2 != in {
			t.Fatal("Parse is not deterministic")
		}
	})
}

func BenchmarkFrame(b *testing.B) {
	bl := builder(b, []int{64}, 16, 0)
	buf := make([]byte, 128)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		bl.Frame(buf, uint64(i), int64(i))
	}
}

// BenchmarkStamp: a frame stamped where a ring's slot kept it, against BenchmarkFrame's
// copy of the whole template.
func BenchmarkStamp(b *testing.B) {
	bl := builder(b, []int{64}, 16, 0)
	buf := make([]byte, 128)
	bl.Frame(buf, 0, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		bl.Stamp(buf, uint64(i)*16, int64(i))
	}
}

func BenchmarkCounter(b *testing.B) {
	bl := builder(b, []int{64}, 1, 0)
	c := NewCounter(7)
	buf := make([]byte, 128)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		n := bl.Frame(buf, uint64(i), int64(i))
		c.Add(buf[:n], int64(i)+1000)
	}
}

// TestHeadersMatchGopacket: the hand-written headers are byte for byte what gopacket's
// layers serialise for the same frame (the builder used gopacket until it was replaced to
// keep 4 MB of layer tables out of the board's binary), for every flow, size and tag.
func TestHeadersMatchGopacket(t *testing.T) {
	for _, vlan := range []int{0, 1, 100, 4094} {
		for _, size := range []int{68, 128, 1518, 9018} {
			for _, sport := range []uint16{srcPortBase, srcPortBase + 7, 0xffff} {
				s := Spec{Src: macA, Dst: macB, SrcIP: DefaultSrcIP, DstIP: DefaultDstIP, VLAN: vlan}
				payload := make([]byte, size-FCS-ethHdr-ipHdr-udpHdr-map[bool]int{true: vlanHdr}[vlan != 0])
				for i := range payload {
					payload[i] = byte(i*7 + size)
				}
				got := headers(s, sport, payload)
				eth := &layers.Ethernet{SrcMAC: s.Src, DstMAC: s.Dst, EthernetType: layers.EthernetTypeIPv4}
				ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolUDP,
					SrcIP: s.SrcIP.AsSlice(), DstIP: s.DstIP.AsSlice()}
				udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: DstPort}
				udp.SetNetworkLayerForChecksum(ip)
				ls := []gopacket.SerializableLayer{eth}
				if vlan != 0 {
					eth.EthernetType = layers.EthernetTypeDot1Q
					ls = append(ls, &layers.Dot1Q{VLANIdentifier: uint16(vlan), Type: layers.EthernetTypeIPv4})
				}
				ls = append(ls, ip, udp, gopacket.Payload(payload))
				buf := gopacket.NewSerializeBuffer()
				if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
					t.Fatal(err)
				}
				if want := buf.Bytes(); string(got) != string(want) {
					t.Fatalf("vlan %d size %d sport %#x:\n got % x\nwant % x", vlan, size, sport, got[:46], want[:46])
				}
			}
		}
	}
}

// TestDropReport: a reflector turns a received frame into a drop report; it still
// carries valid IPv4 and UDP checksums, parses as a report of its stream with the count,
// and the counter keeps the highest count, not as loss on the path.
func TestDropReport(t *testing.T) {
	for _, vlan := range []int{0, 7} {
		b := builder(t, []int{128}, 1, vlan)
		f := make([]byte, 256)
		n := b.Frame(f, 41, 123456)
		if !MakeDropReport(f[:n], 9) {
			t.Fatal("a test frame was not made a report")
		}
		checkFrame(t, f[:n])
		in, k := Parse(f[:n])
		if k != DropReport || in.Stream != 7 || in.Sent != 9 {
			t.Fatalf("vlan %d: parsed %v %+v", vlan, k, in)
		}
		c := NewCounter(7)
		for seq := uint64(0); seq < 10; seq++ {
			if seq != 3 && seq != 4 {
				m := b.Frame(f, seq, 1)
				c.Add(f[:m], 2)
			}
		}
		for _, d := range []uint64{1, 2, 1} { // a late, lower report changes nothing
			m := b.Frame(f, 0, 1)
			MakeDropReport(f[:m], d)
			c.Add(f[:m], 3)
		}
		r := c.Result(10, 0)
		if r.Lost != 2 || r.ReflectorDrops != 2 || r.PathLost() != 0 || r.Foreign != 0 {
			t.Fatalf("vlan %d: %+v, path lost %d", vlan, r, r.PathLost())
		}
		r.SenderDrops = 5 // more dropped than lost (counters of other traffic): none on the path
		if r.PathLost() != 0 {
			t.Fatalf("path lost %d", r.PathLost())
		}
	}
	if MakeDropReport([]byte("not a frame at all, just text to be left alone......................."), 1) {
		t.Fatal("a foreign frame was made a report")
	}
}

// TestAnyStreams: counting every stream, each gets its own counter at its first frame;
// two rings' accounting merges by stream, sorted; past the max a stream's frames are
// foreign and over, so no port's traffic makes the sink allocate without bound.
func TestAnyStreams(t *testing.T) {
	buf := make([]byte, 128)
	send := func(s *Streams, stream uint16, seqs ...uint64) {
		b, err := NewBuilder(Spec{Src: macA, Dst: macB, Sizes: []int{64}, Flows: 1, Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range seqs {
			s.Add(buf[:b.Frame(buf, q, 0)], 1000, false)
		}
	}
	r1, r2 := AnyStreams(4), AnyStreams(4)
	send(r1, 9, 0, 1, 2)
	send(r1, 3, 0, 1)
	send(r2, 3, 2, 3)
	send(r2, 5, 0)
	r1.Add(buf[:10], 0, false) // not a test frame
	r1.Merge(r2)
	total, per := r1.Result(nil, time.Second)
	if len(per) != 3 || per[0].Stream != 3 || per[1].Stream != 5 || per[2].Stream != 9 {
		t.Fatalf("streams %+v, want 3, 5, 9", per)
	}
	if per[0].Received != 4 || per[0].Lost != 0 || per[1].Received != 1 || per[2].Received != 3 || total.Received != 8 || total.Foreign != 1 {
		t.Errorf("per stream %+v, total %+v", per, total)
	}
	over := AnyStreams(2)
	for id := uint16(100); id < 1100; id++ {
		send(over, id, 0)
	}
	if len(over.C) != 2 || over.Over != 998 || over.Foreign != 998 {
		t.Errorf("1000 streams, max 2: %d counters, over %d, foreign %d", len(over.C), over.Over, over.Foreign)
	}
	if s := AnyStreams(1 << 20); s.max != MaxAnyStreams {
		t.Errorf("max %d, want it held to %d", s.max, MaxAnyStreams)
	}
}

// BenchmarkStreams: the sink's cost a frame counting its stream and counting every
// stream (one array load more).
func BenchmarkStreams(b *testing.B) {
	bl := builder(b, []int{64}, 1, 0)
	buf := make([]byte, 128)
	for _, c := range []struct {
		name string
		s    *Streams
	}{{"fixed", NewStreams(7, 1)}, {"any", AnyStreams(0)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				n := bl.Frame(buf, uint64(i), int64(i))
				c.s.Add(buf[:n], int64(i)+1000, false)
			}
		})
	}
}

// TestLatencyOnePass: the percentiles and maximum read in one pass are the ones the
// histogram gives asked one by one, for histograms of one value to a million, spread
// from a microsecond to seconds; and a sum of one stream is that stream's.
func TestLatencyOnePass(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 9, 10, 11, 999, 1000, 1001, 100_000, 1_000_000} {
		h := hdrhistogram.New(1, 100e9, 3)
		for range n {
			h.RecordValue(int64(1000 * math.Exp(rng.Float64()*15)))
		}
		want := Latency{P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99), P999: h.ValueAtQuantile(99.9), Max: h.Max()}
		if got := latency(h); *got != want {
			t.Errorf("%d values: %+v, want %+v", n, *got, want)
		}
	}
	c := NewCounter(7)
	for i := range 1000 {
		c.lat.RecordValue(int64(10_000 + i*37))
	}
	one := c.Result(1000, time.Second)
	if sum := Sum([]Result{one}, time.Second); sum.Latency == nil || *sum.Latency != *one.Latency {
		t.Errorf("sum of one stream %+v, the stream %+v", sum.Latency, one.Latency)
	}
}

// BenchmarkResult: a trial's result of one stream of 3000 frames whose round trips
// spread over a millisecond, as the emulated ZC702's frames step has them.
func BenchmarkResult(b *testing.B) {
	s := NewStreams(1, 1)
	for i := range 3000 {
		s.C[0].lat.RecordValue(int64(100_000 + i*300))
	}
	s.C[0].Received = 3000
	for b.Loop() {
		s.Result([]uint64{3000}, 3*time.Second)
	}
}
