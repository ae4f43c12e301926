// Package kreflect is a reflector in a port's receive path: a BPF program at the port's
// TC ingress (TCX) sends every test frame addressed to the port back out of it, MACs
// swapped, in the softirq that received it, as the kernel answers a ping: no thread to
// wake, so the round trip a board measures through it is the path's and the port's, not
// the wake-up of a reflecting thread on a CPU that may be idle (on a virtual machine,
// halted: some 25 µs where a ping's whole round trip takes 5), nor the station's load.
package kreflect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"

	"github.com/zynqnet/linerate/netperf/frames"
)

// Counts is what the program counted: test frames sent back, and the port's other
// frames (left to the kernel: ARP, a ping, frames for other addresses).
type Counts struct {
	Reflected, Foreign uint64
}

// Reflector is the program attached to a port's ingress. Close detaches it; so does the
// end of the process (the attachment is a BPF link held by this process, not a filter
// left on the port).
type Reflector struct {
	counts *ebpf.Map
	prog   *ebpf.Program
	link   link.Link
}

const (
	keyReflected = 0
	keyForeign   = 1
)

// Open attaches a reflector to iface (in the calling thread's network namespace).
func Open(iface string) (*Reflector, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, err
	}
	if len(ifi.HardwareAddr) != 6 {
		return nil, fmt.Errorf("%s has no Ethernet address", iface)
	}
	// Kernels before 5.11 charge BPF maps and programs to RLIMIT_MEMLOCK.
	_ = rlimit.RemoveMemlock()
	r := &Reflector{}
	r.counts, err = ebpf.NewMap(&ebpf.MapSpec{Name: "lr_reflect", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 2})
	if err != nil {
		return nil, fmt.Errorf("%s: BPF map: %w", iface, err)
	}
	r.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: "lr_reflect", Type: ebpf.SchedCLS, License: "GPL",
		Instructions: program(ifi.HardwareAddr, ifi.Index, r.counts.FD()),
	})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: BPF program: %w", iface, err)
	}
	r.link, err = link.AttachTCX(link.TCXOptions{Interface: ifi.Index, Program: r.prog, Attach: ebpf.AttachTCXIngress})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: attach at TC ingress (TCX, Linux 6.6+): %w", iface, err)
	}
	return r, nil
}

// Counts reads the program's counts, summed over the CPUs.
func (r *Reflector) Counts() (Counts, error) {
	var c Counts
	for key, dst := range map[uint32]*uint64{keyReflected: &c.Reflected, keyForeign: &c.Foreign} {
		var per []uint64
		if err := r.counts.Lookup(key, &per); err != nil {
			return c, fmt.Errorf("BPF map: %w", err)
		}
		for _, v := range per {
			*dst += v
		}
	}
	return c, nil
}

// Close detaches the program and frees it.
func (r *Reflector) Close() error {
	var errs []error
	if r.link != nil {
		errs = append(errs, r.link.Close())
	}
	if r.prog != nil {
		errs = append(errs, r.prog.Close())
	}
	if r.counts != nil {
		errs = append(errs, r.counts.Close())
	}
	return errors.Join(errs...)
}

// __sk_buff's len, data and data_end (include/uapi/linux/bpf.h), how much of a frame
// the program reads (up to a tagged frame's magic), and TC's verdicts.
const (
	skbLen     = 0
	skbData    = 76
	skbDataEnd = 80
	headLen    = 48
	tcxNext    = -1 // TC_ACT_UNSPEC: the next program at this hook, then the stack
)

// program is the reflector: for a frame addressed to mac whose Ethernet type (after at
// most one VLAN tag left in the frame: the kernel has taken the outer one off into the
// skb, and puts it back on the way out) is IPv4 without options, carrying UDP to
// frames.DstPort with a test frame's or an end marker's magic, it swaps the MACs and
// redirects the frame out of ifindex (TC_ACT_REDIRECT); any other frame goes on to the
// next program and the stack (TCX_NEXT). The thread reflector (frames.Parse) would also
// take an IPv4 header with options; no sender of test frames writes one.
//
// Written as instructions here, not compiled from C: some 80 instructions need no clang
// on the build machine, and cilium/ebpf's asm is how its users write such programs.
func program(mac net.HardwareAddr, ifindex, countsFD int) asm.Instructions {
	n16 := func(v uint16) int64 { // a big-endian field as a 16-bit load reads it
		var b [2]byte
		binary.BigEndian.PutUint16(b[:], v)
		return int64(binary.NativeEndian.Uint16(b[:]))
	}
	ins := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R7, asm.R6, skbData, asm.Word),
		asm.LoadMem(asm.R8, asm.R6, skbDataEnd, asm.Word),
		// What the program reads, up to the magic under a tag (18 + 20 + 8 + 2 bytes),
		// must be in the skb's head: where it is not (the frame on pages, as a driver or
		// a sender's TX ring may leave it), the head is made to hold it
		// (bpf_skb_pull_data), and the pointers read again.
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, headLen),
		asm.JLE.Reg(asm.R2, asm.R8, "head"),
		asm.LoadMem(asm.R2, asm.R6, skbLen, asm.Word),
		asm.JLT.Imm(asm.R2, headLen, "foreign"), // shorter than any test frame
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Imm(asm.R2, headLen),
		asm.FnSkbPullData.Call(),
		asm.JNE.Imm(asm.R0, 0, "foreign"),
		asm.LoadMem(asm.R7, asm.R6, skbData, asm.Word),
		asm.LoadMem(asm.R8, asm.R6, skbDataEnd, asm.Word),
		// The longest untagged check reads up to the magic: 14 + 20 + 8 + 2 bytes.
		asm.Mov.Reg(asm.R2, asm.R7).WithSymbol("head"),
		asm.Add.Imm(asm.R2, 44),
		asm.JGT.Reg(asm.R2, asm.R8, "foreign"),
		asm.LoadMem(asm.R3, asm.R7, 0, asm.Word),
		asm.LoadImm(asm.R4, int64(binary.NativeEndian.Uint32(mac[0:4])), asm.DWord),
		asm.JNE.Reg(asm.R3, asm.R4, "foreign"),
		asm.LoadMem(asm.R3, asm.R7, 4, asm.Half),
		asm.JNE.Imm(asm.R3, int32(binary.NativeEndian.Uint16(mac[4:6])), "foreign"),
		asm.LoadMem(asm.R3, asm.R7, 12, asm.Half),
		asm.JEq.Imm(asm.R3, int32(n16(0x0800)), "ip14"),
		asm.JEq.Imm(asm.R3, int32(n16(0x8100)), "tagged"),
		asm.JEq.Imm(asm.R3, int32(n16(0x88a8)), "tagged"),
		asm.Ja.Label("foreign"),
		asm.Mov.Reg(asm.R2, asm.R7).WithSymbol("tagged"),
		asm.Add.Imm(asm.R2, 48),
		asm.JGT.Reg(asm.R2, asm.R8, "foreign"),
		asm.LoadMem(asm.R3, asm.R7, 16, asm.Half),
		asm.JNE.Imm(asm.R3, int32(n16(0x0800)), "foreign"),
	}
	ins = append(ins, checkIP(18, "ip18", n16)...)
	ins = append(ins, asm.Ja.Label("reflect"))
	ins = append(ins, checkIP(14, "ip14", n16)...)
	ins = append(ins,
		// Swap the MACs: destination (0-5) and source (6-11).
		asm.LoadMem(asm.R2, asm.R7, 0, asm.Word).WithSymbol("reflect"),
		asm.LoadMem(asm.R3, asm.R7, 4, asm.Half),
		asm.LoadMem(asm.R4, asm.R7, 6, asm.Word),
		asm.LoadMem(asm.R5, asm.R7, 10, asm.Half),
		asm.StoreMem(asm.R7, 0, asm.R4, asm.Word),
		asm.StoreMem(asm.R7, 4, asm.R5, asm.Half),
		asm.StoreMem(asm.R7, 6, asm.R2, asm.Word),
		asm.StoreMem(asm.R7, 10, asm.R3, asm.Half),
	)
	ins = append(ins, count(keyReflected, countsFD, "", "counted")...)
	ins = append(ins,
		asm.Mov.Imm(asm.R1, int32(ifindex)).WithSymbol("counted"),
		asm.Mov.Imm(asm.R2, 0), // out of the port (BPF_F_INGRESS not set)
		asm.FnRedirect.Call(),
		asm.Return(),
	)
	ins = append(ins, count(keyForeign, countsFD, "foreign", "pass")...)
	ins = append(ins,
		asm.Mov.Imm(asm.R0, tcxNext).WithSymbol("pass"),
		asm.Return(),
	)
	return ins
}

// checkIP jumps to "foreign" unless the IPv4 header at off (the frame is known that
// long) has no options, carries UDP to frames.DstPort, and a test frame's or an end
// marker's magic follows the UDP header; label marks its first instruction.
func checkIP(off int16, label string, n16 func(uint16) int64) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R3, asm.R7, off, asm.Byte).WithSymbol(label),
		asm.JNE.Imm(asm.R3, 0x45, "foreign"),
		asm.LoadMem(asm.R3, asm.R7, off+9, asm.Byte),
		asm.JNE.Imm(asm.R3, 17, "foreign"),
		asm.LoadMem(asm.R3, asm.R7, off+22, asm.Half),
		asm.JNE.Imm(asm.R3, int32(n16(frames.DstPort)), "foreign"),
		asm.LoadMem(asm.R3, asm.R7, off+28, asm.Half),
		asm.JEq.Imm(asm.R3, int32(n16(frames.Magic)), "reflect"),
		asm.JNE.Imm(asm.R3, int32(n16(frames.EndMagic)), "foreign"),
	}
}

// count adds one to the counter at key on this CPU, then goes on at next; label (if
// any) marks its first instruction.
func count(key int64, countsFD int, label, next string) asm.Instructions {
	first := asm.StoreImm(asm.RFP, -4, key, asm.Word)
	if label != "" {
		first = first.WithSymbol(label)
	}
	return asm.Instructions{
		first,
		asm.LoadMapPtr(asm.R1, countsFD),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, next),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
	}
}
