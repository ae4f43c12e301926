// Package rawsock is the raw-socket half of linerate's traffic engine: AF_PACKET rings
// (Documentation/networking/packet_mmap.rst) on golang.org/x/sys/unix, pure Go. TX uses a
// TPACKET_V2 PACKET_TX_RING with PACKET_QDISC_BYPASS: frames are stamped straight into
// the shared ring, each after a virtio_net_hdr that has the kernel send it as a linear
// skb where it can (linearTX), and one send() hands a whole batch to the driver. RX uses a TPACKET_V3
// block ring, or, where a frame must be handed on as it arrives (the reflector), a
// TPACKET_V2 ring of frames. The ring headers are read at fixed offsets (their fields are fixed-width,
// so the layout is the same on arm, arm64 and amd64); no gopacket afpacket here because
// its TX path is one write per frame.
package rawsock

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zynqnet/linerate/netperf/frames"
	"golang.org/x/sys/unix"
)

// Ring header layout (include/uapi/linux/if_packet.h).
const (
	tpStatusKernel      = 0
	tpStatusUser        = 1 // RX: the block is the user's
	tpStatusAvailable   = 0 // TX: free for the user
	tpStatusSendRequest = 1
	tpStatusWrongFormat = 4
	// What the kernel ORs into a frame's status to say which clock stamped it.
	tpStatusTSMask = unix.TP_STATUS_TS_SOFTWARE | unix.TP_STATUS_TS_SYS_HARDWARE | unix.TP_STATUS_TS_RAW_HARDWARE

	// TPACKET_ALIGN(sizeof(struct tpacket2_hdr)): where TX data starts without
	// PACKET_TX_HAS_OFF (TPACKET2_HDRLEN - sizeof(struct sockaddr_ll)).
	tp2DataOff = 32
	// struct tpacket3_hdr is 48 bytes; struct sockaddr_ll follows it.
	tp3HdrLen      = tp3Hdr
	sllPkttypeOff  = tp3HdrLen + 10
	packetOutgoing = 4
	// struct tpacket2_hdr is 32 bytes (TPACKET_ALIGN'd); struct sockaddr_ll follows it.
	tp2HdrLen       = 32
	sll2PkttypeOff  = tp2HdrLen + 10
	rxFrameSize     = 2048
	rxFramesPerRing = 4096
)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func u32at(b []byte, off int) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }

func ifIndex(name string) (int, error) {
	ifi, err := lookupIf(name)
	if err != nil {
		return 0, err
	}
	return ifi.Index, nil
}

func lookupIf(name string) (*net.Interface, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("interface %q: %w", name, err)
	}
	return ifi, nil
}

// sock is an AF_PACKET socket and its mapped ring.
type sock struct {
	fd   int
	ring []byte
}

// Close unmaps the ring and closes the socket.
func (s *sock) Close() error {
	if s.ring != nil {
		unix.Munmap(s.ring)
		s.ring = nil
	}
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
	return nil
}

// TX is a TPACKET_V2 transmit ring bound to one interface.
type TX struct {
	sock
	frameSize int
	frames    int
	next      int
	pending   int // frames committed since the last Kick
	maxLen    int
	// vnet: each frame follows a struct virtio_net_hdr of this many bytes (linearTX);
	// 0 without. csum: the port finishes the UDP checksums of the frames that qualify
	// (partialUDP).
	vnet int
	csum bool
	// kept is, slot by slot, the key of the frame the slot still holds from its last
	// CommitAs (0: none known); nil where slots do not keep frames (see Holds).
	kept []uint64
	// hw: the NIC stamps each frame as it leaves (StampHW); reap is the oldest slot
	// committed whose stamp has not been read back yet.
	hw   bool
	reap int
}

// packetSocket looks iface up and opens an AF_PACKET raw socket with protocol 0: it
// hears nothing until bound with a protocol.
func packetSocket(iface string) (idx, fd int, err error) {
	ifi, fd, err := packetSocketIf(iface)
	if err != nil {
		return 0, -1, err
	}
	return ifi.Index, fd, nil
}

// packetSocketIf is packetSocket with the interface it found (its MTU for OpenTX).
func packetSocketIf(iface string) (*net.Interface, int, error) {
	ifi, err := lookupIf(iface)
	if err != nil {
		return nil, -1, err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, -1, fmt.Errorf("AF_PACKET socket: %w (needs CAP_NET_RAW)", err)
	}
	return ifi, fd, nil
}

// OpenTX opens a transmit ring for frames of up to maxLen bytes (without FCS), of about
// ringFrames frames (0: about 4 MiB, a line-rate run's; PacedTXFrames sizes a paced
// trial's). bypass sets PACKET_QDISC_BYPASS (frames skip the interface's qdisc, as
// trafgen does). Where it may (linearTX), each frame goes out whole in its skb's head.
func OpenTX(iface string, maxLen, ringFrames int, bypass bool) (*TX, error) {
	t, idx, err := newTX(iface, maxLen, bypass)
	if err != nil {
		return nil, err
	}
	if err := t.setRing(iface, idx, ringFrames); err != nil {
		return nil, err
	}
	return t, nil
}

// OpenTXRings opens n transmit rings as OpenTX does, their sockets on the calling
// thread (so in its network namespace) and their rings each on a goroutine of its own
// while alongside runs here: the kernel waits out an RCU grace period for every ring it
// sets up (packet_set_ring's synchronize_net), and grace periods waited together end
// together. A trial's sender and receive rings opened one after the other were 0.06 s
// of a PHY self-test's or a frames step's set-up on the emulated ZC702. alongside's
// error comes first; on any error no ring is left open.
func OpenTXRings(iface string, n, maxLen, ringFrames int, bypass bool, alongside func() error) ([]*TX, error) {
	txs := make([]*TX, 0, n)
	closeAll := func() {
		for _, t := range txs {
			t.Close()
		}
	}
	var idx int
	for range n {
		t, i, err := newTX(iface, maxLen, bypass)
		if err != nil {
			closeAll()
			return nil, err
		}
		txs, idx = append(txs, t), i
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, t := range txs {
		wg.Go(func() { errs[i] = t.setRing(iface, idx, ringFrames) })
	}
	var err error
	if alongside != nil {
		err = alongside()
	}
	wg.Wait()
	if err = cmp.Or(append([]error{err}, errs...)...); err != nil {
		closeAll()
		return nil, err
	}
	return txs, nil
}

// newTX opens a transmit ring's socket on iface with its options: everything of
// OpenTX that asks the calling thread's network namespace.
func newTX(iface string, maxLen int, bypass bool) (*TX, int, error) {
	// Protocol 0: the socket transmits only and is never handed received frames; the
	// kernel takes each frame's protocol from its Ethernet header.
	ifi, fd, err := packetSocketIf(iface)
	if err != nil {
		return nil, 0, err
	}
	t := &TX{sock: sock{fd: fd}, maxLen: maxLen}
	fail := func(what string, err error) (*TX, int, error) {
		t.Close()
		return nil, 0, fmt.Errorf("%s: TX ring: %s: %w", iface, what, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V2); err != nil {
		return fail("TPACKET_V2", err)
	}
	if bypass {
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
			return fail("PACKET_QDISC_BYPASS", err)
		}
	}
	if linearTX(kernelRelease(), ifi.MTU, maxLen) && unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1) == nil {
		t.vnet = vnetHdrLen
		t.csum = txCsumOffload(fd, iface)
	}
	return t, ifi.Index, nil
}

// setRing sets up t's ring of about ringFrames frames (see OpenTX), maps it and binds
// the socket to the port of index idx: calls on the socket alone, from any thread.
// On error t is closed.
func (t *TX) setRing(iface string, idx, ringFrames int) error {
	fail := func(what string, err error) error {
		t.Close()
		return fmt.Errorf("%s: TX ring: %s: %w", iface, what, err)
	}
	t.frameSize = 128
	for t.frameSize < tp2DataOff+t.vnet+t.maxLen {
		t.frameSize *= 2
	}
	block := max(t.frameSize, 1<<16)
	// About 4 MiB of ring: 32768 small frames, 256 jumbo ones; a paced trial's fewer.
	blocks := max(4<<20/block, 4)
	if ringFrames > 0 {
		blocks = min(blocks, max((ringFrames*t.frameSize+block-1)/block, 4))
	}
	t.frames = blocks * (block / t.frameSize)
	if t.vnet > 0 {
		t.kept = make([]uint64, t.frames)
	}
	req := unix.TpacketReq{Block_size: uint32(block), Block_nr: uint32(blocks), Frame_size: uint32(t.frameSize), Frame_nr: uint32(t.frames)}
	if err := unix.SetsockoptTpacketReq(t.fd, unix.SOL_PACKET, unix.PACKET_TX_RING, &req); err != nil {
		return fail("PACKET_TX_RING", err)
	}
	var err error
	if t.ring, err = unix.Mmap(t.fd, 0, block*blocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return fail("mmap", err)
	}
	if err := unix.Bind(t.fd, &unix.SockaddrLinklayer{Ifindex: idx}); err != nil {
		return fail("bind", err)
	}
	return nil
}

// Linear TX. Without help tpacket_snd copies a frame's Ethernet header into the skb's
// head and hangs the rest of it on the ring's page (get_page a frame, a page fragment
// the driver maps or the receiver pulls its IP header out of, reallocating the head).
// A struct virtio_net_hdr before each frame (PACKET_VNET_HDR, read by tpacket_snd since
// Linux 4.6, commit 1d036d25e560) whose hdr_len is the frame's length, no segmentation
// asked (a checksum may be: csum_linux.go), has the kernel copy the whole frame into the
// head instead: a plain linear skb. On veth (kernel 6.18, gen on one core) that is 1.33x
// the frames a second at 64 bytes, 1.31x at 512 and 1.32x at 1518; scripts/bench-gen
// puts gen --cpus 2 at 1.2-1.3x trafgen -P 2 (docs/benchmarks.md), where the two were
// level. A frame longer than txLinearMax keeps its first txHeaders bytes in the head
// and the rest on the page (1.02x at 9018): whole, a board's kernel
// would allocate several pages of contiguous memory for each jumbo frame (whole, veth
// took 1.24x).
const (
	vnetHdrLen  = 10 // sizeof(struct virtio_net_hdr)
	txLinearMax = 2048
	txHeaders   = 128
)

// linearTX says whether a TX ring on a kernel of release, for frames of up to maxLen
// bytes on a port of mtu, sends them linear. The kernel skips its length check of a
// frame (MTU and Ethernet header) when the frame carries a virtio_net_hdr, so a ring
// whose frames could be longer keeps the check: without.
func linearTX(release string, mtu, maxLen int) bool {
	return releaseAtLeast(release, 4, 6) && maxLen <= mtu+14
}

// linearLen is how much of an n-byte frame goes into the skb's head.
func linearLen(n int) int {
	if n > txLinearMax {
		return min(n, txHeaders)
	}
	return n
}

// kernelRelease is the running kernel's release (uname -r).
func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// releaseAtLeast says whether a kernel release ("6.1.0-57-arm64") is major.minor or
// later; false for one it cannot read.
func releaseAtLeast(release string, major, minor int) bool {
	var ma, mi int
	if n, _ := fmt.Sscanf(release, "%d.%d", &ma, &mi); n != 2 {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// Linear says whether the ring sends its frames as linear skbs (see linearTX).
func (t *TX) Linear() bool { return t.vnet > 0 }

// CsumOffload says whether the port finishes the UDP checksums of the ring's IPv4/UDP
// frames (see partialUDP).
func (t *TX) CsumOffload() bool { return t.csum }

// Frames is the ring's capacity.
func (t *TX) Frames() int { return t.frames }

// Slot returns the data area of the next free frame, or nil when the ring is full (the
// driver has not sent what was queued yet).
func (t *TX) Slot() ([]byte, error) {
	off := t.next * t.frameSize
	switch st := atomic.LoadUint32(u32at(t.ring, off)) &^ tpStatusTSMask; st {
	case tpStatusAvailable:
		return t.ring[off+tp2DataOff+t.vnet : off+tp2DataOff+t.vnet+t.maxLen], nil
	case tpStatusWrongFormat:
		return nil, errors.New("the kernel refused a frame as malformed (TP_STATUS_WRONG_FORMAT)")
	}
	return nil, nil
}

// Holds says whether the slot Slot returned still holds the frame last committed into
// it with CommitAs under key, its virtio_net_hdr and length included: the caller then
// writes only what differs from that frame (frames.Builder's Stamp) and commits it
// under the same key. A slot keeps its frame only where the kernel copies every frame
// into its skb and never writes into the ring's data (a linear ring's frames of up to
// txLinearMax bytes: see linearTX); slots that sent anything else, by Commit, hold no
// key. In a profile of gen --cpus 2 at 64 bytes on veth (kernel 6.18) the frame's
// copy and the offload's checks were 1.6 points of gen's own 2.85% of the CPUs' time;
// stamped in place, its own share is 1.8%.
func (t *TX) Holds(key uint64) bool {
	return key != 0 && t.kept != nil && t.kept[t.next] == key
}

// CommitAs is Commit for a frame the slot may keep under key (see Holds); when it holds
// it already, only the frame's length and status are written.
func (t *TX) CommitAs(n int, key uint64) {
	if !t.Holds(key) || *u32at(t.ring, t.next*t.frameSize+4) != uint32(t.vnet+n) {
		t.Commit(n)
		if n <= txLinearMax && t.kept != nil {
			t.kept[(t.next+t.frames-1)%t.frames] = key
		}
		return
	}
	t.queue(n)
}

// Commit queues the frame written into the slot Slot returned, n bytes long.
func (t *TX) Commit(n int) {
	off := t.next * t.frameSize
	if t.kept != nil {
		t.kept[t.next] = 0
	}
	if t.vnet > 0 {
		// gso_type stays 0 (the ring's pages come zeroed): no segmentation asked.
		h := t.ring[off+tp2DataOff : off+tp2DataOff+vnetHdrLen]
		h[0] = 0 // flags
		if t.csum {
			if start := partialUDP(t.ring[off+tp2DataOff+vnetHdrLen : off+tp2DataOff+vnetHdrLen+n]); start > 0 {
				h[0] = virtioNeedsCsum
				binary.NativeEndian.PutUint16(h[6:], uint16(start))      // csum_start
				binary.NativeEndian.PutUint16(h[8:], uint16(udpCsumOff)) // csum_offset
			}
		}
		binary.NativeEndian.PutUint16(h[2:], uint16(linearLen(n))) // hdr_len
	}
	t.queue(n)
}

// queue hands the next slot's frame of n bytes to the kernel.
func (t *TX) queue(n int) {
	off := t.next * t.frameSize
	*u32at(t.ring, off+4) = uint32(t.vnet + n) // tp_len
	storeRelease(u32at(t.ring, off), tpStatusSendRequest)
	t.next = (t.next + 1) % t.frames
	t.pending++
}

// Kick hands the queued frames to the driver (one send() for the batch) and returns at
// once; the reflector uses it, as it must get back to its RX ring.
func (t *TX) Kick() error { return t.send(unix.MSG_DONTWAIT) }

// Flush hands the queued frames to the driver and waits until it has taken them: the
// kernel then sends the whole batch in this one call and the socket's send buffer
// paces a fast sender to the port (measured on veth: 3 to 19% more frames per second
// than Kick, about trafgen's rate).
func (t *TX) Flush() error { return t.send(0) }

// send asks the kernel to send the ring's queued frames. With none committed since the
// last call it asks only when the ring is full: a frame the driver or the link refused
// (its queue stopped, no carrier: tpacket_snd puts it back as queued and returns
// ENOBUFS) waits in the ring, with every frame after it, until a send() retries them,
// and a sender whose ring is full commits nothing more to make one. That retry does
// not wait (MSG_DONTWAIT): what the kernel has in flight finishes without it.
func (t *TX) send(flags int) error {
	if t.pending == 0 {
		if !t.full() {
			return nil
		}
		flags = unix.MSG_DONTWAIT
	}
	t.pending = 0
	for {
		err := unix.Sendto(t.fd, nil, flags, nil)
		switch {
		case err == nil, errors.Is(err, unix.EAGAIN), errors.Is(err, unix.ENOBUFS):
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENETDOWN), errors.Is(err, unix.ENXIO):
			return fmt.Errorf("the interface went down: %w", err)
		}
		return fmt.Errorf("send: %w", err)
	}
}

// full says whether the ring's next slot is still the kernel's (queued or being sent);
// false for a closed ring.
func (t *TX) full() bool { return t.ring != nil && t.busy(t.next) }

// busy says whether slot i is the kernel's: neither free nor handed back as malformed.
func (t *TX) busy(i int) bool {
	st := atomic.LoadUint32(u32at(t.ring, i*t.frameSize)) &^ tpStatusTSMask
	return st != tpStatusAvailable && st != tpStatusWrongFormat
}

// Unsent is the frames (and their bytes with FCS) still queued in the ring that the
// kernel has not taken: after Drain, those it could not send (the link gone), which a
// sender takes off its count of frames sent.
func (t *TX) Unsent() (n int, bytes uint64) {
	for i := 0; t.ring != nil && i < t.frames; i++ {
		if atomic.LoadUint32(u32at(t.ring, i*t.frameSize))&^tpStatusTSMask == tpStatusSendRequest {
			n++
			bytes += uint64(int(*u32at(t.ring, i*t.frameSize+4)) - t.vnet + frames.FCS)
		}
	}
	return n, bytes
}

// Drain waits (bounded) until the driver has taken every queued frame.
func (t *TX) Drain(timeout time.Duration) {
	t.Kick()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		busy := false
		for i := 0; i < t.frames && !busy; i++ {
			busy = t.busy(i)
		}
		if !busy {
			return
		}
		unix.Sendto(t.fd, nil, unix.MSG_DONTWAIT, nil)
		time.Sleep(time.Millisecond)
	}
}

// RX is a receive ring bound to one interface: TPACKET_V3 blocks (OpenRX), or
// TPACKET_V2 frames (OpenRXFrames).
type RX struct {
	sock
	blockSize int
	blocks    int
	cur       int
	// frames is the frame count of a TPACKET_V2 ring; 0 for a block ring.
	frames int
}

// Handler is what Poll hands each frame to: its bytes (valid only during the call), its
// receive time in ns, and whether that time is the NIC's hardware stamp (StampHW) rather
// than the kernel's software one (CLOCK_REALTIME).
type Handler func(frame []byte, rxNanos int64, hw bool)

// OpenRX opens a receive ring on iface for every protocol; frames the host itself sends
// are left out (PACKET_IGNORE_OUTGOING, and the packet type where that is missing).
func OpenRX(iface string) (*RX, error) { return openRXBlocks(iface, RXRing{}) }

// openRXBlocks opens a TPACKET_V3 ring of the shape's blocks on iface.
func openRXBlocks(iface string, shape RXRing) (*RX, error) {
	r := &RX{blockSize: 1 << 20, blocks: 32}
	if shape.BlockSize > 0 && shape.Blocks > 0 {
		r.blockSize, r.blocks = shape.BlockSize, shape.Blocks
	}
	return r.open(iface, unix.TPACKET_V3, func(fd int) error {
		req := unix.TpacketReq3{Block_size: uint32(r.blockSize), Block_nr: uint32(r.blocks), Frame_size: 2048,
			Frame_nr: uint32(r.blockSize / 2048 * r.blocks), Retire_blk_tov: 2}
		return unix.SetsockoptTpacketReq3(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req)
	})
}

// OpenRXFrames opens a TPACKET_V2 receive ring of frames on iface. The kernel hands each
// frame over, and wakes the reader, as it arrives; a TPACKET_V3 block is handed over when
// it is full or when its timer (at least a millisecond) retires it, so at low rates every
// frame would wait for the timer. The reflector uses this ring: what it holds back is
// added to the round trip it is there to measure.
func OpenRXFrames(iface string) (*RX, error) {
	r := &RX{blockSize: 1 << 20, frames: rxFramesPerRing}
	r.blocks = rxFramesPerRing * rxFrameSize / r.blockSize
	return r.open(iface, unix.TPACKET_V2, func(fd int) error {
		req := unix.TpacketReq{Block_size: uint32(r.blockSize), Block_nr: uint32(r.blocks), Frame_size: rxFrameSize, Frame_nr: uint32(r.frames)}
		return unix.SetsockoptTpacketReq(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req)
	})
}

// open sets up r's receive ring of the given TPACKET version on iface: setRing asks for
// the ring, which is then mapped, and the socket bound to every protocol. The socket
// opens with protocol 0, so no frame of another interface is queued before the bind;
// frames the host itself sends are left out (PACKET_IGNORE_OUTGOING, Linux 4.20+, and
// the packet type where that is missing).
func (r *RX) open(iface string, version int, setRing func(fd int) error) (*RX, error) {
	idx, fd, err := packetSocket(iface)
	if err != nil {
		return nil, err
	}
	r.sock = sock{fd: fd}
	fail := func(what string, err error) (*RX, error) {
		r.Close()
		return nil, fmt.Errorf("%s: RX ring: %s: %w", iface, what, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, version); err != nil {
		return fail(map[int]string{unix.TPACKET_V2: "TPACKET_V2", unix.TPACKET_V3: "TPACKET_V3"}[version], err)
	}
	unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
	if err := setRing(fd); err != nil {
		return fail("PACKET_RX_RING", err)
	}
	if r.ring, err = unix.Mmap(fd, 0, r.blockSize*r.blocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return fail("mmap", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: idx}); err != nil {
		return fail("bind", err)
	}
	return r, nil
}

// OpenRXRings opens n receive rings of the shape on iface (TPACKET_V2 frames, as
// OpenRXFrames, or TPACKET_V3 blocks, as OpenRX) that share its frames in one
// PACKET_FANOUT group, each frame to one ring. n 1 is one ring and no group.
//
// A ring hears every frame between its bind and its join, and the group hears them
// too: what a ring holds when it has joined is thrown away, so no frame is counted
// twice. (Frames arriving in those microseconds are lost to the count; rings are
// opened before a test's sender starts.)
func OpenRXRings(iface string, n int, shape RXRing, mode Fanout) ([]*RX, error) {
	if n < 1 {
		return nil, fmt.Errorf("%s: %d receive rings: want at least 1", iface, n)
	}
	var rings []*RX
	closeAll := func() {
		for _, r := range rings {
			r.Close()
		}
	}
	id := 0
	for i := 0; i < n; i++ {
		var r *RX
		var err error
		if shape.PerFrame {
			r, err = OpenRXFrames(iface)
		} else {
			r, err = openRXBlocks(iface, shape)
		}
		if err != nil {
			closeAll()
			return nil, err
		}
		rings = append(rings, r)
		if n == 1 {
			break
		}
		arg := id | int(mode)<<16
		if i == 0 {
			// The kernel picks an id no other group in this namespace has (Linux 4.1+).
			arg = (int(mode) | unix.PACKET_FANOUT_FLAG_UNIQUEID) << 16
		}
		if err := unix.SetsockoptInt(r.fd, unix.SOL_PACKET, unix.PACKET_FANOUT, arg); err != nil {
			closeAll()
			return nil, fmt.Errorf("%s: RX ring %d: PACKET_FANOUT: %w", iface, i, err)
		}
		if i == 0 {
			v, err := unix.GetsockoptInt(r.fd, unix.SOL_PACKET, unix.PACKET_FANOUT)
			if err != nil {
				closeAll()
				return nil, fmt.Errorf("%s: RX ring 0: read the fanout group: %w", iface, err)
			}
			id = v & 0xffff
			continue
		}
		r.Poll(0, func([]byte, int64, bool) {})
		r.Drops()
	}
	return rings, nil
}

// pollFrames is Poll on a TPACKET_V2 ring: every frame ready now, then a wait of up to
// timeout for the next one.
func (r *RX) pollFrames(timeout time.Duration, fn Handler) (int, error) {
	n := 0
	for {
		f := r.ring[r.cur*rxFrameSize : (r.cur+1)*rxFrameSize]
		status := u32at(f, 0)
		if atomic.LoadUint32(status)&tpStatusUser == 0 {
			if n > 0 || timeout <= 0 {
				return n, nil
			}
			if err := r.wait(timeout); err != nil {
				return n, err
			}
			timeout = 0
			continue
		}
		snap := int(*u32at(f, 8))
		mac := int(*(*uint16)(unsafe.Pointer(&f[12])))
		sec, nsec := *u32at(f, 16), *u32at(f, 20)
		if f[sll2PkttypeOff] != packetOutgoing && mac+snap <= len(f) {
			fn(f[mac:mac+snap], int64(sec)*1e9+int64(nsec), atomic.LoadUint32(status)&unix.TP_STATUS_TS_RAW_HARDWARE != 0)
			n++
		}
		storeRelease(status, tpStatusKernel)
		r.cur = (r.cur + 1) % r.frames
	}
}

// wait blocks until the socket has something to read, or timeout.
func (r *RX) wait(timeout time.Duration) error {
	ms := max(int(timeout/time.Millisecond), 1)
	_, err := unix.Poll([]unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN | unix.POLLERR}}, ms)
	if err != nil && !errors.Is(err, unix.EINTR) {
		return fmt.Errorf("poll: %w", err)
	}
	return nil
}

// Poll hands every frame of the blocks (or frames) ready now to fn, waiting up to
// timeout for the first. It returns the number of frames handed over.
func (r *RX) Poll(timeout time.Duration, fn Handler) (int, error) {
	if r.frames > 0 {
		return r.pollFrames(timeout, fn)
	}
	n := 0
	for {
		b := r.ring[r.cur*r.blockSize : (r.cur+1)*r.blockSize]
		status := u32at(b, 8)
		if atomic.LoadUint32(status)&tpStatusUser == 0 {
			if n > 0 || timeout <= 0 {
				return n, nil
			}
			if err := r.wait(timeout); err != nil {
				return n, err
			}
			timeout = 0
			continue
		}
		num := int(*u32at(b, 12))
		off := int(*u32at(b, 16))
		for i := 0; i < num && off > 0 && off+tp3HdrLen <= len(b); i++ {
			sec, nsec := *u32at(b, off+4), *u32at(b, off+8)
			snap := int(*u32at(b, off+12))
			mac := int(*(*uint16)(unsafe.Pointer(&b[off+24])))
			hw := *u32at(b, off+20)&unix.TP_STATUS_TS_RAW_HARDWARE != 0
			if b[off+sllPkttypeOff] != packetOutgoing && off+mac+snap <= len(b) {
				fn(b[off+mac:off+mac+snap], int64(sec)*1e9+int64(nsec), hw)
				n++
			}
			next := int(*u32at(b, off))
			if next == 0 {
				break
			}
			off += next
		}
		atomic.StoreUint32(status, tpStatusKernel)
		r.cur = (r.cur + 1) % r.blocks
	}
}

// Drops is how many frames the kernel dropped because the ring was full (counted since
// the last call), a sink that was too slow, not loss on the path.
func (r *RX) Drops() uint64 {
	if r.frames > 0 {
		st, err := unix.GetsockoptTpacketStats(r.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
		if err != nil {
			return 0
		}
		return uint64(st.Drops)
	}
	st, err := unix.GetsockoptTpacketStatsV3(r.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0
	}
	return uint64(st.Drops)
}
