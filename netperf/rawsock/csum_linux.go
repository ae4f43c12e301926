package rawsock

import (
	"encoding/binary"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Checksum offload. A linear ring's frames can also ask for the port to finish their
// UDP checksum: VIRTIO_NET_HDR_F_NEEDS_CSUM in the frame's virtio_net_hdr, with where
// the checksum starts and where its field is, makes the kernel's skb CHECKSUM_PARTIAL,
// as the kernel's own UDP sends are on a port that offloads. The field then holds the
// pseudo-header's sum and the port (or, where it cannot, the kernel at the last moment,
// skb_checksum_help) adds the datagram's: the frame leaves with the checksum it was
// built with.
//
// On macb (Zynq GEM, NETIF_F_HW_CSUM on by default) a frame that is not
// CHECKSUM_PARTIAL has its FCS computed in software (macb_pad_and_fcs: crc32 over the
// whole frame, in the driver, for every frame: with checksum offload on, the GEM would
// otherwise rewrite its checksums), and a partial one is finished by the GEM, checksum
// and FCS. On veth it is level: the peer trusts the frame's checksum as it trusts a
// NIC's verified one, and the sender pays for marking the skb partial; the flow
// dissection of each frame stays (tpacket_snd parses the headers before it reads the
// virtio_net_hdr).
//
// Only where it pays: an untagged IPv4/UDP frame, whole (not a fragment), without
// padding past the IP packet (the port would sum it too), whose checksum is not 0 ("no
// checksum"), on a port that offloads IPv4 checksums (ETHTOOL_GTXCSUM): elsewhere the
// kernel would sum every frame in software, where today nothing does.
const (
	virtioNeedsCsum = 1 // VIRTIO_NET_HDR_F_NEEDS_CSUM
	udpCsumOff      = 6 // the checksum field in the UDP header
)

// partialUDP readies frame f for checksum offload: when f is an IPv4/UDP frame that
// qualifies (see above) it writes the pseudo-header's sum into the UDP checksum field and
// returns where the UDP header starts; else it leaves f as it is and returns 0.
// Written by hand: it runs on every frame the ring sends.
func partialUDP(f []byte) int {
	const eth, ipMin, udpLen = 14, 20, 8
	if len(f) < eth+ipMin+udpLen || f[12] != 0x08 || f[13] != 0x00 || f[14]>>4 != 4 {
		return 0
	}
	ip := f[eth:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if ihl < ipMin || ip[9] != unix.IPPROTO_UDP || binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 || eth+total != len(f) || total < ihl+udpLen {
		return 0
	}
	udp := ip[ihl:]
	ulen := binary.BigEndian.Uint16(udp[4:])
	if int(ulen) != total-ihl || binary.BigEndian.Uint16(udp[udpCsumOff:]) == 0 {
		return 0
	}
	sum := uint32(binary.BigEndian.Uint16(ip[12:])) + uint32(binary.BigEndian.Uint16(ip[14:])) +
		uint32(binary.BigEndian.Uint16(ip[16:])) + uint32(binary.BigEndian.Uint16(ip[18:])) +
		unix.IPPROTO_UDP + uint32(ulen)
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(udp[udpCsumOff:], uint16(sum))
	return eth + ihl
}

// txCsumOffload says whether iface offloads IPv4 checksums (ethtool's tx-checksumming:
// ETHTOOL_GTXCSUM, any of the NETIF_F_CSUM_MASK features), asked through fd (the ring's
// packet socket: the kernel hands a socket's unknown ioctls to the device layer). False
// when the kernel cannot say.
func txCsumOffload(fd int, iface string) bool {
	if len(iface) >= unix.IFNAMSIZ {
		return false
	}
	var v [2]uint32 // struct ethtool_value
	v[0] = unix.ETHTOOL_GTXCSUM
	var ifr struct { // struct ifreq with ifr_data, as large as the kernel's
		name [unix.IFNAMSIZ]byte
		data unsafe.Pointer
		_    [24]byte
	}
	copy(ifr.name[:], iface)
	ifr.data = unsafe.Pointer(&v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(&v)
	return errno == 0 && v[1] != 0
}
