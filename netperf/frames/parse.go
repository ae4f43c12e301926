package frames

import "encoding/binary"

// Kind is what a received frame is to the sink.
type Kind int

const (
	Foreign Kind = iota // not a test frame (ARP, IPv6, other traffic)
	Data                // a test frame whose payload checksum holds
	End                 // an end-of-stream marker
	Corrupt             // a test frame (magic, UDP to DstPort) whose payload checksum fails
	// DropReport is a reflector's word that its own TX ring had no room for frames of a
	// stream: Info.Sent is how many it dropped so far (cumulative), so the sender can
	// tell them from loss on the path.
	DropReport
)

// Info is what the parser takes from a test frame.
type Info struct {
	Stream uint16
	Seq    uint32
	TX     uint64 // 48-bit TX timestamp, ns
	Sent   uint64 // end marker: frames sent; drop report: frames the reflector dropped
}

// Parse classifies a received frame (as AF_PACKET hands it: no FCS; an 802.1Q tag the
// NIC did not strip is skipped). It reads by offset and never allocates.
func Parse(f []byte) (Info, Kind) {
	var in Info
	if len(f) < ethHdr+ipHdr+udpHdr+HeaderLen {
		return in, Foreign
	}
	off := 12
	et := binary.BigEndian.Uint16(f[off:])
	off += 2
	if et == 0x8100 || et == 0x88a8 {
		et = binary.BigEndian.Uint16(f[off+2:])
		off += 4
	}
	if et != 0x0800 || len(f) < off+ipHdr+udpHdr+HeaderLen {
		return in, Foreign
	}
	ip := f[off:]
	if ip[0]>>4 != 4 || ip[9] != 17 {
		return in, Foreign
	}
	ihl := int(ip[0]&0xf) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if ihl < ipHdr || total < ihl+udpHdr+HeaderLen || total > len(ip) {
		return in, Foreign
	}
	udp := ip[ihl:total]
	if binary.BigEndian.Uint16(udp[2:]) != DstPort {
		return in, Foreign
	}
	ulen := int(binary.BigEndian.Uint16(udp[4:]))
	if ulen < udpHdr+HeaderLen || ulen > len(udp) {
		return in, Corrupt
	}
	p := udp[udpHdr:ulen]
	magic := binary.BigEndian.Uint16(p)
	if magic != Magic && magic != EndMagic && magic != DropMagic {
		return in, Foreign
	}
	in.Stream = binary.BigEndian.Uint16(p[2:])
	if fold(onesSum(0, p)) != 0xffff {
		return in, Corrupt
	}
	switch magic {
	case EndMagic:
		in.Sent = binary.BigEndian.Uint64(p[4:])
		return in, End
	case DropMagic:
		in.Sent = binary.BigEndian.Uint64(p[4:])
		return in, DropReport
	}
	in.Seq = binary.BigEndian.Uint32(p[4:])
	in.TX = uint64(binary.BigEndian.Uint16(p[8:]))<<32 | uint64(binary.BigEndian.Uint32(p[10:]))
	return in, Data
}

// SwapMACs turns a frame around for the reflector.
func SwapMACs(f []byte) {
	var t [6]byte
	copy(t[:], f[0:6])
	copy(f[0:6], f[6:12])
	copy(f[6:12], t[:])
}

// payload finds the test header and payload of a test frame, as Parse does; nil if f is
// not one.
func payload(f []byte) []byte {
	if _, k := Parse(f); k == Foreign || k == Corrupt {
		return nil
	}
	off := 14
	if et := binary.BigEndian.Uint16(f[12:]); et == 0x8100 || et == 0x88a8 {
		off += 4
	}
	ip := f[off:]
	ihl := int(ip[0]&0xf) * 4
	udp := ip[ihl:int(binary.BigEndian.Uint16(ip[2:]))]
	return udp[udpHdr:int(binary.BigEndian.Uint16(udp[4:]))]
}

// MakeDropReport turns a received test frame, in place, into a drop report for its
// stream saying dropped frames were dropped: the header's magic and count change and its
// own checksum is set again, so the UDP checksum stays right (see the package doc). The
// caller swaps the MACs. It reports false for a frame that is not a test frame.
func MakeDropReport(f []byte, dropped uint64) bool {
	p := payload(f)
	if p == nil {
		return false
	}
	binary.BigEndian.PutUint16(p[0:], DropMagic)
	binary.BigEndian.PutUint64(p[4:], dropped)
	binary.BigEndian.PutUint16(p[12:], 0)
	binary.BigEndian.PutUint16(p[14:], 0)
	binary.BigEndian.PutUint16(p[14:], ^fold(onesSum(0, p)))
	return true
}
