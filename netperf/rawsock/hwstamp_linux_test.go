package rawsock

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"unsafe"

	"github.com/zynqnet/linerate/netperf/frames"
	"golang.org/x/sys/unix"
)

// No NIC here stamps frames in hardware (veth has no clock, QEMU's GEM model no TSU:
// the emulated ZCU102's macb says "GEM doesn't support hardware ptp"), so the ring side
// is tested on rings laid out in memory as the kernel lays them out
// (include/uapi/linux/if_packet.h), with the stamps and status flags a TSU's driver
// makes the kernel write.

func testFrame(t *testing.T, stream uint16, seq uint64) []byte {
	t.Helper()
	b, err := frames.NewBuilder(frames.Spec{Src: net.HardwareAddr{2, 0, 0, 0, 0, 1}, Dst: net.HardwareAddr{2, 0, 0, 0, 0, 2}, Sizes: []int{128}, Flows: 1, Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	f := make([]byte, b.MaxFrameLen())
	return f[:b.Frame(f, seq, 12345)]
}

// TestRXHardwareStampFlag: Poll says which frames carry the NIC's stamp, in a TPACKET_V2
// ring of frames and a TPACKET_V3 ring of blocks alike.
func TestRXHardwareStampFlag(t *testing.T) {
	f := testFrame(t, 3, 7)
	// V2: two frames, the first stamped by the NIC at 5.000000100 s, the second not.
	v2 := &RX{sock: sock{fd: -1, ring: make([]byte, 2*rxFrameSize)}, frames: 2, blockSize: rxFrameSize, blocks: 2}
	for i, st := range []uint32{tpStatusUser | unix.TP_STATUS_TS_RAW_HARDWARE, tpStatusUser | unix.TP_STATUS_TS_SOFTWARE} {
		h := v2.ring[i*rxFrameSize:]
		binary.NativeEndian.PutUint32(h[0:], st)
		binary.NativeEndian.PutUint32(h[4:], uint32(len(f)))
		binary.NativeEndian.PutUint32(h[8:], uint32(len(f)))
		binary.NativeEndian.PutUint16(h[12:], 64) // tp_mac
		binary.NativeEndian.PutUint32(h[16:], 5)
		binary.NativeEndian.PutUint32(h[20:], 100)
		copy(h[64:], f)
	}
	var got []bool
	var stamps []int64
	n, err := v2.Poll(0, func(fr []byte, rx int64, hw bool) {
		if string(fr) != string(f) {
			t.Errorf("frame bytes differ")
		}
		got, stamps = append(got, hw), append(stamps, rx)
	})
	if err != nil || n != 2 || !got[0] || got[1] || stamps[0] != 5e9+100 {
		t.Fatalf("V2: %d frames, hw %v, stamps %v, %v", n, got, stamps, err)
	}

	// V3: one block of two packets, the second stamped by the NIC.
	blk := 1 << 12
	v3 := &RX{sock: sock{fd: -1, ring: make([]byte, blk)}, blockSize: blk, blocks: 1}
	b := v3.ring
	binary.NativeEndian.PutUint32(b[8:], tpStatusUser) // block status
	binary.NativeEndian.PutUint32(b[12:], 2)           // num_pkts
	binary.NativeEndian.PutUint32(b[16:], 64)          // offset of the first packet
	for i, st := range []uint32{unix.TP_STATUS_TS_SOFTWARE, unix.TP_STATUS_TS_RAW_HARDWARE} {
		off := 64 + i*512
		next := uint32(512)
		if i == 1 {
			next = 0
		}
		binary.NativeEndian.PutUint32(b[off:], next)
		binary.NativeEndian.PutUint32(b[off+4:], 9)
		binary.NativeEndian.PutUint32(b[off+8:], uint32(i))
		binary.NativeEndian.PutUint32(b[off+12:], uint32(len(f)))
		binary.NativeEndian.PutUint32(b[off+16:], uint32(len(f)))
		binary.NativeEndian.PutUint32(b[off+20:], st)
		binary.NativeEndian.PutUint16(b[off+24:], 80)
		copy(b[off+80:], f)
	}
	got, stamps = nil, nil
	n, err = v3.Poll(0, func(fr []byte, rx int64, hw bool) { got, stamps = append(got, hw), append(stamps, rx) })
	if err != nil || n != 2 || got[0] || !got[1] || stamps[1] != 9e9+1 {
		t.Fatalf("V3: %d frames, hw %v, stamps %v, %v", n, got, stamps, err)
	}
}

// TestTXReap: frames the driver is done with come back AVAILABLE with the NIC's TX stamp
// and the flag; Reap hands each over once, in order, stops at a frame not sent yet,
// and clears the flags so Slot takes the slot again. A ring that sends linear hands
// over the frame after its virtio_net_hdr, as long as it was written.
func TestTXReap(t *testing.T) {
	for _, vnet := range []int{0, vnetHdrLen} {
		testTXReap(t, vnet)
	}
}

func testTXReap(t *testing.T, vnet int) {
	const frameSize, n = 256, 4
	tx := &TX{sock: sock{fd: -1, ring: make([]byte, frameSize*n)}, frameSize: frameSize, frames: n, maxLen: frameSize - tp2DataOff - vnet, vnet: vnet, hw: true}
	for seq := uint64(0); seq < 3; seq++ {
		slot, err := tx.Slot()
		if err != nil || slot == nil {
			t.Fatalf("slot %d: %v", seq, err)
		}
		tx.Commit(copy(slot, testFrame(t, 4, seq)))
	}
	status := func(i int) *uint32 { return (*uint32)(unsafe.Pointer(&tx.ring[i*frameSize])) }
	// The driver sent frames 0 and 1 (1 without a stamp); frame 2 is still queued.
	*status(0) = tpStatusAvailable | unix.TP_STATUS_TS_RAW_HARDWARE
	binary.NativeEndian.PutUint32(tx.ring[16:], 7)
	binary.NativeEndian.PutUint32(tx.ring[20:], 42)
	*status(1) = tpStatusAvailable
	type stamp struct {
		seq uint32
		ns  int64
	}
	var got []stamp
	reap := func(f []byte, ns int64) {
		in, k := frames.Parse(f)
		if len(f) != 128-frames.FCS || k != frames.Data {
			t.Errorf("reaped a frame that is not a test frame: %v", k)
		}
		got = append(got, stamp{in.Seq, ns})
	}
	tx.Reap(reap)
	if len(got) != 1 || got[0] != (stamp{0, 7e9 + 42}) || tx.reap != 2 || *status(0) != tpStatusAvailable {
		t.Fatalf("reaped %v, reap at %d, slot 0 status %#x", got, tx.reap, *status(0))
	}
	*status(2) = tpStatusAvailable | unix.TP_STATUS_TS_RAW_HARDWARE
	tx.Reap(reap)
	if len(got) != 2 || got[1].seq != 2 || tx.reap != 3 {
		t.Fatalf("reaped %v, reap at %d", got, tx.reap)
	}
	// A slot whose stamp flags were left on is still free to Slot.
	*status(3) = tpStatusAvailable | unix.TP_STATUS_TS_SOFTWARE
	if slot, err := tx.Slot(); slot == nil || err != nil {
		t.Fatalf("Slot on a stamped free slot: %v %v", slot, err)
	}
}

// TestEnableHWStampsOnVeth: veth has no hardware clock; the answer says so, names the
// port and changes nothing.
func TestEnableHWStampsOnVeth(t *testing.T) {
	a, _, _, _ := pair(t)
	a.Do(t, func() error {
		restore, err := EnableHWStamps("a0")
		var no *NoHWStamps
		if restore != nil || !errors.As(err, &no) || no.Why != "a0 has no hardware timestamping (ethtool -T a0: no hardware-transmit/receive/raw-clock)" {
			t.Errorf("veth: restore %v, err %v", restore != nil, err)
		}
		return nil
	})
}

// TestFanoutModesAreTheKernels: the modes are defined without x/sys/unix (so ParseFanout
// builds everywhere); their values must be the kernel's.
func TestFanoutModesAreTheKernels(t *testing.T) {
	if FanoutHash != unix.PACKET_FANOUT_HASH || FanoutCPU != unix.PACKET_FANOUT_CPU {
		t.Fatalf("hash %d cpu %d, the kernel's %d %d", FanoutHash, FanoutCPU, unix.PACKET_FANOUT_HASH, unix.PACKET_FANOUT_CPU)
	}
}
