package frames

import "encoding/binary"

// Kind is what a received frame is to the sink.
type Kind int

const (
	Foreign Kind = iota // not a test frame (ARP, IPv6, other traffic)
	Data                // a test frame whose payload checksum holds
	End                 // an end-of-stream marker
	Corrupt             // a test frame (magic, UDP to DstPort) whose payload checksum fails
)

// Info is what the parser takes from a test frame.
type Info struct {
	Stream uint16
	Seq    uint32
	TX     uint64 // 48-bit TX timestamp, ns
	Sent   uint64 // end marker: frames sent
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
	if magic != Magic && magic != EndMagic {
		return in, Foreign
	}
	in.Stream = binary.BigEndian.Uint16(p[2:])
	if fold(onesSum(0, p)) != 0xffff {
		return in, Corrupt
	}
	if magic == EndMagic {
		in.Sent = binary.BigEndian.Uint64(p[4:])
		return in, End
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
