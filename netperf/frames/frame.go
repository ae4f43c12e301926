// Package frames is the test-frame format of linerate's raw-socket traffic engine:
// Ethernet (optionally 802.1Q) / IPv4 / UDP frames built once per flow and size, then
// stamped per frame with a stream id, a sequence number and a TX
// timestamp; the parser and the per-stream accounting of the sink; rates in the Ethernet
// sense (RFC 2544, RFC 1242: line rate counts preamble and inter-frame gap).
//
// The test header at the start of the UDP payload is 16 bytes, so a 64-byte frame
// (60 bytes before the FCS) carries it:
//
//	0  magic   u16  0x4c52 "LR" (data), 0x4c45 "LE" (end of stream), 0x4c44 "LD" (a
//	                reflector's drop report: bytes 4..12 = frames of the stream it dropped)
//	2  stream  u16
//	4  seq     u32  (the sink extends it to 64 bits); end marker: bytes 4..12 = frames sent, u64
//	8  tx ts   48 bits of CLOCK_REALTIME nanoseconds (wraps after 78 hours)
//	14 csum    u16  Internet checksum of the whole UDP payload
//
// The rest of the payload is a fixed pattern. Because the payload carries its own
// Internet checksum, its one's-complement sum is the same for every frame, so the UDP
// checksum of a flow's template stays right whatever the sequence number and timestamp:
// stamping a frame writes 16 bytes, never a checksum over the frame.
package frames

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
)

const (
	Magic     = 0x4c52
	EndMagic  = 0x4c45
	DropMagic = 0x4c44 // "LD": a reflector's drop report
	HeaderLen = 16
	// DstPort is the UDP port of test frames (the sink also accepts any port: the magic
	// and checksum identify a frame).
	DstPort = 0x4c52
	// FCS is the frame check sequence the NIC appends: frame sizes count it, as RFC 2544
	// does; the buffers handed to the socket are size-4 bytes.
	FCS = 4
	// WireOverhead is what a frame costs on the wire beyond its size: preamble and SFD
	// (8 bytes) and the minimum inter-frame gap (12).
	WireOverhead = 20
	MinSize      = 64
	MaxSize      = 9018 // a 9000-byte MTU frame with its header and FCS
	ethHdr       = 14
	vlanHdr      = 4
	ipHdr        = 20
	udpHdr       = 8
)

// IMIX is the simple IMIX: 7:4:1 of 64, 594 and 1518-byte frames (40, 576 and 1500-byte
// IP packets), 361.83 bytes on average.
var IMIX = []int{64, 594, 64, 1518, 64, 594, 64, 64, 594, 64, 594, 64}

// Spec describes the frames of one stream.
type Spec struct {
	Src, Dst     net.HardwareAddr
	SrcIP, DstIP netip.Addr
	VLAN         int   // 802.1Q VLAN id, 0 for none
	Sizes        []int // frame sizes with FCS, cycled frame by frame (one for a fixed size)
	Flows        int   // UDP source ports used, frame by frame, so RSS/RPS spread the load
	// FirstFlow offsets the source ports: a sender of several (gen --cpus N) takes its
	// own range, so a receiver's RSS or fanout hash tells the senders' flows apart.
	FirstFlow int
	Stream    uint16
}

// Defaults for the addresses: RFC 2544's benchmarking network, 198.18.0.0/15.
var (
	DefaultSrcIP = netip.MustParseAddr("198.18.0.1")
	DefaultDstIP = netip.MustParseAddr("198.19.0.1")
)

const srcPortBase = 0xc000

// Builder stamps frames of a stream into buffers without allocating.
type Builder struct {
	spec  Spec
	tmpl  [][]tmpl // [flow][size index]
	cycle []int    // size index of frame seq%len(cycle)
	id    uint64   // this builder's part of its templates' keys (Key)
	// seqs is frame seq's template and key at seqs[seq%len(seqs)], over the period of
	// flows and sizes (their counts' least common multiple, where it is at most
	// maxPeriod; else nil and they are worked out frame by frame); pow2: len(seqs) is a
	// power of two, so a mask finds the entry. On a Zynq-7000 (32-bit ARM) each of the
	// two 64-bit divisions a lookup took, for every frame, was a call to the runtime's
	// software division (runtime.uint64mod).
	seqs []entry
	pow2 bool
}

// entry is a frame's template and its key.
type entry struct {
	t   *tmpl
	key uint64
}

const maxPeriod = 1 << 16

// builders numbers the builders, so no two templates share a key in a process.
var builders atomic.Uint64

type tmpl struct {
	frame []byte // without FCS
	off   int    // offset of the test header
	sum   uint32 // one's-complement sum of the payload's fixed words (magic, stream, pattern)
}

// MinSizeFor is the smallest frame size that carries the test header.
func MinSizeFor(vlan bool) int {
	n := ethHdr + ipHdr + udpHdr + HeaderLen + FCS
	if vlan {
		n += vlanHdr
	}
	return max(n, MinSize)
}

// NewBuilder checks the spec and builds one template per flow and size.
func NewBuilder(s Spec) (*Builder, error) {
	if len(s.Src) != 6 || len(s.Dst) != 6 {
		return nil, fmt.Errorf("source and destination MAC must be 6 bytes")
	}
	if s.Flows < 1 || s.Flows > 65535-srcPortBase {
		return nil, fmt.Errorf("flows %d: want 1..%d", s.Flows, 65535-srcPortBase)
	}
	if s.FirstFlow < 0 || s.FirstFlow+s.Flows > 65535-srcPortBase {
		return nil, fmt.Errorf("flows %d from %d: the UDP source ports end at %d, want at most %d flows in all", s.Flows, s.FirstFlow, srcPortBase+s.FirstFlow+s.Flows-1, 65535-srcPortBase)
	}
	if s.VLAN < 0 || s.VLAN > 4094 {
		return nil, fmt.Errorf("VLAN %d: want 1..4094", s.VLAN)
	}
	if !s.SrcIP.IsValid() {
		s.SrcIP = DefaultSrcIP
	}
	if !s.DstIP.IsValid() {
		s.DstIP = DefaultDstIP
	}
	if !s.SrcIP.Is4() || !s.DstIP.Is4() {
		return nil, fmt.Errorf("addresses must be IPv4")
	}
	if len(s.Sizes) == 0 {
		return nil, fmt.Errorf("no frame size")
	}
	b := &Builder{spec: s, id: builders.Add(1)}
	var sizes []int
	index := map[int]int{}
	for _, sz := range s.Sizes {
		if sz < MinSizeFor(s.VLAN != 0) || sz > MaxSize {
			return nil, fmt.Errorf("frame size %d: want %d..%d", sz, MinSizeFor(s.VLAN != 0), MaxSize)
		}
		if _, ok := index[sz]; !ok {
			index[sz] = len(sizes)
			sizes = append(sizes, sz)
		}
		b.cycle = append(b.cycle, index[sz])
	}
	for f := 0; f < s.Flows; f++ {
		var row []tmpl
		for _, sz := range sizes {
			t, err := build(s, sz, uint16(srcPortBase+s.FirstFlow+f))
			if err != nil {
				return nil, err
			}
			row = append(row, t)
		}
		b.tmpl = append(b.tmpl, row)
	}
	if period := lcm(len(b.tmpl), len(b.cycle)); period <= maxPeriod {
		b.seqs = make([]entry, period)
		for i := range b.seqs {
			b.seqs[i] = b.work(uint64(i))
		}
		b.pow2 = period&(period-1) == 0
	}
	return b, nil
}

// lcm is the least common multiple of a and b (both positive).
func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// work works out frame seq's template and key.
func (b *Builder) work(seq uint64) entry {
	flow, size := seq%uint64(len(b.tmpl)), b.cycle[seq%uint64(len(b.cycle))]
	return entry{&b.tmpl[flow][size], b.id<<32 | (flow*uint64(len(b.tmpl[0])) + uint64(size))}
}

// at is frame seq's template and key.
func (b *Builder) at(seq uint64) entry {
	switch {
	case b.pow2:
		return b.seqs[seq&uint64(len(b.seqs)-1)]
	case b.seqs != nil:
		return b.seqs[seq%uint64(len(b.seqs))]
	}
	return b.work(seq)
}

// headers writes Ethernet (with an 802.1Q tag when s.VLAN is set), IPv4 (DF, TTL 64,
// no options) and UDP headers before payload, with both checksums. Written by hand for
// three fixed headers: gopacket's layers package, which builds the same bytes (the tests
// compare with it), weighs 4 MB in a board's binary for these 42 bytes.
func headers(s Spec, sport uint16, payload []byte) []byte {
	hdr := ethHdr + ipHdr + udpHdr
	if s.VLAN != 0 {
		hdr += vlanHdr
	}
	f := make([]byte, hdr+len(payload))
	copy(f[0:6], s.Dst)
	copy(f[6:12], s.Src)
	ip := f[ethHdr:]
	binary.BigEndian.PutUint16(f[12:], 0x0800) // IPv4
	if s.VLAN != 0 {
		binary.BigEndian.PutUint16(f[12:], 0x8100)
		binary.BigEndian.PutUint16(f[14:], uint16(s.VLAN))
		binary.BigEndian.PutUint16(f[16:], 0x0800)
		ip = f[ethHdr+vlanHdr:]
	}
	ipLen := ipHdr + udpHdr + len(payload)
	ip[0] = 4<<4 | ipHdr/4
	binary.BigEndian.PutUint16(ip[2:], uint16(ipLen))
	binary.BigEndian.PutUint16(ip[6:], 0x4000) // don't fragment
	ip[8], ip[9] = 64, 17                      // TTL, UDP
	src, dst := s.SrcIP.As4(), s.DstIP.As4()
	copy(ip[12:16], src[:])
	copy(ip[16:20], dst[:])
	binary.BigEndian.PutUint16(ip[10:], ^fold(onesSum(0, ip[:ipHdr])))
	udp := ip[ipHdr:]
	binary.BigEndian.PutUint16(udp[0:], sport)
	binary.BigEndian.PutUint16(udp[2:], DstPort)
	binary.BigEndian.PutUint16(udp[4:], uint16(udpHdr+len(payload)))
	copy(udp[udpHdr:], payload)
	// The pseudo-header: addresses, protocol, UDP length; then the datagram.
	sum := onesSum(0, ip[12:20]) + 17 + uint32(udpHdr+len(payload))
	c := ^fold(onesSum(sum, udp[:udpHdr+len(payload)]))
	if c == 0 {
		c = 0xffff // RFC 768: a computed 0 is sent as all ones
	}
	binary.BigEndian.PutUint16(udp[6:], c)
	return f
}

func build(s Spec, size int, sport uint16) (tmpl, error) {
	hdr := ethHdr + ipHdr + udpHdr
	if s.VLAN != 0 {
		hdr += vlanHdr
	}
	payload := make([]byte, size-FCS-hdr)
	binary.BigEndian.PutUint16(payload[0:], Magic)
	binary.BigEndian.PutUint16(payload[2:], s.Stream)
	for i := HeaderLen; i < len(payload); i++ {
		payload[i] = byte(i)
	}
	sum := onesSum(0, payload)
	binary.BigEndian.PutUint16(payload[14:], ^fold(sum))

	frame := headers(s, sport, payload)
	if len(frame) != size-FCS {
		return tmpl{}, fmt.Errorf("built %d bytes for size %d", len(frame), size)
	}
	// The fixed words: everything but seq (4..8) and the timestamp (8..14) and checksum.
	fixed := append([]byte{}, payload...)
	for i := 4; i < HeaderLen; i++ {
		fixed[i] = 0
	}
	return tmpl{frame: frame, off: hdr, sum: onesSum(0, fixed)}, nil
}

// Spec is the spec the builder was made from, with its defaults filled in.
func (b *Builder) Spec() Spec {
	s := b.spec
	s.Sizes = append([]int(nil), s.Sizes...)
	return s
}

// FrameLen is the buffer length of frame seq (its size less the FCS).
func (b *Builder) FrameLen(seq uint64) int {
	return len(b.pick(seq).frame)
}

// MaxFrameLen is the longest buffer the stream needs.
func (b *Builder) MaxFrameLen() int {
	n := 0
	for _, t := range b.tmpl[0] {
		n = max(n, len(t.frame))
	}
	return n
}

// AvgSize is the mean frame size (with FCS) over the size cycle.
func (b *Builder) AvgSize() float64 {
	var n int
	for _, i := range b.cycle {
		n += len(b.tmpl[0][i].frame) + FCS
	}
	return float64(n) / float64(len(b.cycle))
}

func (b *Builder) pick(seq uint64) *tmpl { return b.at(seq).t }

// Key names the template frame seq is made from, unlike any other builder's in the
// process (never 0): a buffer that holds a frame made by Frame under the same key
// differs from frame seq only in what Stamp writes.
func (b *Builder) Key(seq uint64) uint64 { return b.at(seq).key }

// Frame writes frame seq, stamped with txNanos, into dst and returns its length. dst
// must hold FrameLen(seq) bytes.
func (b *Builder) Frame(dst []byte, seq uint64, txNanos int64) int {
	copy(dst, b.pick(seq).frame)
	return b.Stamp(dst, seq, txNanos)
}

// Stamp makes the frame in dst, which Frame wrote for a frame of the same Key, frame
// seq stamped with txNanos, writing its 16 changing bytes alone, and returns its
// length. A transmit ring whose slots keep their frames (rawsock's TX.Holds) stamps a
// slot's frame in place, where Frame would copy all of it again.
func (b *Builder) Stamp(dst []byte, seq uint64, txNanos int64) int {
	t := b.pick(seq)
	n := len(t.frame)
	h := dst[t.off : t.off+HeaderLen]
	s32 := uint32(seq)
	ts := uint64(txNanos) & (1<<48 - 1)
	binary.BigEndian.PutUint32(h[4:], s32)
	binary.BigEndian.PutUint16(h[8:], uint16(ts>>32))
	binary.BigEndian.PutUint32(h[10:], uint32(ts))
	sum := t.sum + s32>>16 + s32&0xffff + uint32(ts>>32) + uint32(ts>>16)&0xffff + uint32(ts)&0xffff
	binary.BigEndian.PutUint16(h[14:], ^fold(sum))
	return n
}

// EndFrame writes the end-of-stream marker that tells the sink how many frames were
// sent, and returns its length (the stream's first size).
func (b *Builder) EndFrame(dst []byte, sent uint64) int {
	t := &b.tmpl[0][b.cycle[0]]
	n := copy(dst, t.frame)
	h := dst[t.off : t.off+HeaderLen]
	binary.BigEndian.PutUint16(h[0:], EndMagic)
	binary.BigEndian.PutUint64(h[4:], sent)
	binary.BigEndian.PutUint16(h[12:], 0)
	binary.BigEndian.PutUint16(h[14:], 0)
	// Its own checksum keeps the payload's sum, and so the template's UDP checksum, right.
	binary.BigEndian.PutUint16(h[14:], ^fold(onesSum(0, dst[t.off:n])))
	return n
}

// onesSum adds b as big-endian 16-bit words (odd length padded with zero).
func onesSum(sum uint32, b []byte) uint32 {
	for len(b) >= 2 {
		sum += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

func fold(sum uint32) uint16 {
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return uint16(sum)
}
