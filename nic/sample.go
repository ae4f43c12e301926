package nic

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/u-root/u-root/pkg/dt"

	"github.com/zynqnet/linerate/internal/fdtblob"
	"github.com/zynqnet/linerate/internal/readall"
)

// Sample is one reading of everything linerate doctor judges: the interfaces as show
// reads them, and the machine-wide counters and state around them. Two samples some
// seconds apart give rates.
type Sample struct {
	Interfaces    []*Interface   `json:"interfaces"`
	Softnet       []SoftnetCPU   `json:"softnet"`
	CPUTimes      []CPUTimes     `json:"cpu_times"`
	PacketSockets []PacketSocket `json:"packet_sockets"`
	GEMNodes      []DTNode       `json:"gem_nodes"`
}

// SoftnetCPU is one CPU's line of /proc/net/softnet_stat (net/core/net-procfs.c).
type SoftnetCPU struct {
	CPU         int    `json:"cpu"`
	Processed   uint64 `json:"processed"`
	Dropped     uint64 `json:"dropped"`
	TimeSqueeze uint64 `json:"time_squeeze"`
	ReceivedRPS uint64 `json:"received_rps"`
	FlowLimit   uint64 `json:"flow_limit_count"`
}

// CPUTimes is one CPU's line of /proc/stat, in USER_HZ ticks.
type CPUTimes struct {
	CPU   int    `json:"cpu"`
	Busy  uint64 `json:"busy"`
	Idle  uint64 `json:"idle"`
	IRQ   uint64 `json:"irq"`
	Soft  uint64 `json:"softirq"`
	Total uint64 `json:"total"`
}

// PacketSocket is an AF_PACKET socket from /proc/net/packet, with its owners.
type PacketSocket struct {
	Inode uint64 `json:"inode"`
	// Ifindex is the interface it is bound to; 0 means every interface.
	Ifindex int     `json:"ifindex"`
	Proto   string  `json:"proto"`
	UID     int     `json:"uid"`
	Owners  []Owner `json:"owners"`
}

// Owner is a process holding a socket.
type Owner struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
}

// DTNode is a GEM (Cadence MACB/GEM) node of the live device tree.
type DTNode struct {
	Path       string            `json:"path"`
	Compatible []string          `json:"compatible"`
	Status     string            `json:"status"`
	Props      map[string][]byte `json:"props"`
}

// gemCompatibles are the compatible strings of the macb driver's GEM nodes
// (Documentation/devicetree/bindings/net/cdns,macb.yaml).
var gemCompatibles = []string{"cdns,gem", "cdns,zynq-gem", "cdns,zynqmp-gem", "xlnx,zynqmp-gem",
	"cdns,versal-gem", "xlnx,versal-gem", "cdns,macb", "cdns,zynq-gem"}

// Sample reads the named interfaces (all but loopback when none) and what surrounds them.
func (r *Reader) Sample(names ...string) (*Sample, error) {
	ifcs, err := r.Read(names...)
	if err != nil {
		return nil, err
	}
	root := r.fs()
	s := &Sample{Interfaces: ifcs}
	if s.Softnet, err = root.readSoftnet(); err != nil {
		return nil, err
	}
	if s.CPUTimes, err = root.readCPUTimes(); err != nil {
		return nil, err
	}
	if s.PacketSockets, err = root.readPacketSockets(); err != nil {
		return nil, err
	}
	s.GEMNodes = root.readGEMNodes()
	return s, nil
}

// SampleCounters is a Sample of the counters alone, an interval's start: each port's
// link and driver counters and its IRQs' counts, softnet's and the CPUs' times, which
// is all Diagnose reads of its Before sample. It asks none of the rest (ethtool's
// settings, sysctls, queues, the platform, the PHY, packet sockets, the device tree):
// on the emulated ZC702 it is a fraction of Sample's reads, taken while the PHY's
// self-test runs on the same one core.
func (r *Reader) SampleCounters(names ...string) (*Sample, error) {
	byName, names, err := r.named(names)
	if err != nil {
		return nil, err
	}
	root := r.fs()
	s := &Sample{}
	for _, n := range names {
		l := byName[n]
		ifc := &Interface{Name: l.Name, Index: l.Index, Kind: l.Kind, MAC: l.MAC, Stats: Stats{Link: l.Stats}}
		// A driver without statistics has none here as in Read (its Unsupported says why).
		ifc.Stats.Driver, _ = readDriverStats(r.Kernel, n)
		if ifc.IRQs, err = root.readIRQs(n); err != nil {
			return nil, fmt.Errorf("interface %q: %w", n, err)
		}
		s.Interfaces = append(s.Interfaces, ifc)
	}
	if s.Softnet, err = root.readSoftnet(); err != nil {
		return nil, err
	}
	if s.CPUTimes, err = root.readCPUTimes(); err != nil {
		return nil, err
	}
	return s, nil
}

func (r fsRoot) readSoftnet() ([]SoftnetCPU, error) {
	if err := r.require("proc/net/softnet_stat", "per-CPU backlog counters"); err != nil {
		return nil, err
	}
	b, err := r.readFile("proc/net/softnet_stat")
	if err != nil {
		return nil, err
	}
	return parseSoftnet(b)
}

// parseSoftnet parses /proc/net/softnet_stat: one line per CPU of hex columns (processed,
// dropped, time_squeeze, five zeros, cpu_collision, received_rps, flow_limit_count and,
// since 5.10, backlog length and the CPU number).
func parseSoftnet(b []byte) ([]SoftnetCPU, error) {
	var out []SoftnetCPU
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 3 {
			return nil, fmt.Errorf("softnet_stat line %d: %d columns", i+1, len(f))
		}
		col := func(n int) uint64 {
			if n >= len(f) {
				return 0
			}
			v, _ := strconv.ParseUint(f[n], 16, 64)
			return v
		}
		cpu := i
		if len(f) >= 13 {
			cpu = int(col(12))
		}
		out = append(out, SoftnetCPU{CPU: cpu, Processed: col(0), Dropped: col(1), TimeSqueeze: col(2), ReceivedRPS: col(9), FlowLimit: col(10)})
	}
	return out, nil
}

func (r fsRoot) readCPUTimes() ([]CPUTimes, error) {
	if err := r.require("proc/stat", "CPU times"); err != nil {
		return nil, err
	}
	b, err := r.readFile("proc/stat")
	if err != nil {
		return nil, err
	}
	return parseCPUTimes(b), nil
}

// parseCPUTimes reads the cpuN lines of /proc/stat (user nice system idle iowait irq
// softirq steal ...).
func parseCPUTimes(b []byte) []CPUTimes {
	var out []CPUTimes
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		cpu, err := strconv.Atoi(f[0][3:])
		if err != nil {
			continue
		}
		v := make([]uint64, len(f)-1)
		for i := range v {
			v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
		}
		t := CPUTimes{CPU: cpu, Idle: v[3] + v[4], IRQ: v[5], Soft: v[6]}
		for i, x := range v {
			if i < 8 { // guest time is already inside user
				t.Total += x
			}
		}
		t.Busy = t.Total - t.Idle
		out = append(out, t)
	}
	return out
}

// readPacketSockets reads the AF_PACKET sockets of the reader's network namespace:
// /proc/thread-self/net is the calling thread's namespace, /proc/net that of the process.
func (r fsRoot) readPacketSockets() ([]PacketSocket, error) {
	var b []byte
	var err error
	for _, p := range []string{"proc/thread-self/net/packet", "proc/net/packet"} {
		if b, err = r.readFile(p); err == nil {
			break
		}
	}
	if err != nil {
		// No CONFIG_PACKET: no packet sockets can exist.
		return nil, nil
	}
	socks := parsePacketSockets(b)
	if len(socks) == 0 {
		return socks, nil
	}
	owners := r.socketOwners()
	for i := range socks {
		socks[i].Owners = owners[socks[i].Inode]
	}
	return socks, nil
}

// parsePacketSockets parses /proc/net/packet (net/packet/af_packet.c packet_seq_show):
// sk RefCnt Type Proto Iface R Rmem User Inode.
func parsePacketSockets(b []byte) []PacketSocket {
	var out []PacketSocket
	lines := strings.Split(string(b), "\n")
	for _, l := range lines[min(1, len(lines)):] {
		f := strings.Fields(l)
		if len(f) < 9 {
			continue
		}
		ifindex, err1 := strconv.Atoi(f[4])
		uid, err2 := strconv.Atoi(f[7])
		inode, err3 := strconv.ParseUint(f[8], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		out = append(out, PacketSocket{Inode: inode, Ifindex: ifindex, Proto: f[3], UID: uid})
	}
	return out
}

// socketOwners maps socket inodes to the processes holding them (/proc/PID/fd/N links
// to "socket:[INODE]").
func (r fsRoot) socketOwners() map[uint64][]Owner {
	out := map[uint64][]Owner{}
	ents, err := r.readDir("proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fdDir := filepath.Join("proc", e.Name(), "fd")
		fds, err := r.readDir(fdDir)
		if err != nil {
			continue
		}
		var comm string
		for _, fd := range fds {
			t, err := r.readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !strings.HasPrefix(t, "socket:[") {
				continue
			}
			inode, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(t, "socket:["), "]"), 10, 64)
			if err != nil {
				continue
			}
			if comm == "" {
				comm, _ = r.read(filepath.Join("proc", e.Name(), "comm"))
			}
			out[inode] = append(out[inode], Owner{PID: pid, Comm: comm})
		}
	}
	for k := range out {
		sort.Slice(out[k], func(i, j int) bool { return out[k][i].PID < out[k][j].PID })
	}
	return out
}

// readGEMNodes reads the live device tree's GEM nodes with their properties. Where it
// may, the boot blob says where they are and only those nodes are read live
// (gemPathsFromBlob); else the whole tree is walked for them.
func (r fsRoot) readGEMNodes() []DTNode {
	for _, base := range []string{"sys/firmware/devicetree/base", "proc/device-tree"} {
		if ok, _ := r.exists(base); !ok {
			continue
		}
		var out []DTNode
		if paths, ok := r.gemPathsFromBlob(); ok {
			for _, p := range paths {
				r.readGEMNode(base, p, &out)
			}
			return out
		}
		r.walkDT(base, "", 0, &out)
		return out
	}
	return nil
}

// maxFDT bounds the boot blob read: the kernel takes blobs of up to 2 MiB on arm64
// (MAX_FDT_SIZE), and a board's is tens of kilobytes.
const maxFDT = 4 << 20

// gemPathsFromBlob lists the GEM nodes of the blob the kernel booted with
// (/sys/firmware/fdt), in the walk's order, when that blob still says where every GEM
// node of the live tree is: no overlay is loaded through configfs (how an overlay comes
// in at run time on these boards, 'linerate dts apply' among others, and one may add a
// GEM node). What the nodes hold is read live all the same, so a property or status an
// overlay changed is seen. Not when recording a snapshot: it holds the walk's files, and
// reads back through the walk. On the emulated ZC702 the walk was 0.13 s of a doctor's
// 0.3 s (140 nodes, each a directory read); the blob is one file.
func (r fsRoot) gemPathsFromBlob() ([]string, bool) {
	if r.rec != nil {
		return nil, false
	}
	if ents, err := os.ReadDir(r.path("sys/kernel/config/device-tree/overlays")); err == nil && len(ents) > 0 {
		return nil, false
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if !r.live() {
		return r.blobGEMPaths()
	}
	bootGEMPaths.Lock()
	defer bootGEMPaths.Unlock()
	if !bootGEMPaths.read {
		bootGEMPaths.paths, bootGEMPaths.ok = r.blobGEMPaths()
		bootGEMPaths.read = true
	}
	return slices.Clone(bootGEMPaths.paths), bootGEMPaths.ok
}

// bootGEMPaths are the live system's boot blob's GEM paths, read once a process: the
// kernel's copy of the blob it booted with (/sys/firmware/fdt) does not change while it
// runs (an overlay changes the live tree, not it; and with one loaded the blob is not
// asked). A port's every read asked it again: on the emulated ZC702, 6 ms of decoding
// a time, a run's link watch and steps reading the port three times or more.
var bootGEMPaths struct {
	sync.Mutex
	read, ok bool
	paths    []string
}

// blobGEMPaths reads and decodes the boot blob under root for its GEM nodes' paths.
func (r fsRoot) blobGEMPaths() ([]string, bool) {
	b, err := readall.File(r.path("sys/firmware/fdt"), maxFDT)
	if err != nil {
		return nil, false
	}
	f, err := fdtblob.Decode(b, maxFDT)
	if err != nil || f.RootNode == nil {
		return nil, false
	}
	var paths []string
	var find func(n *dt.Node, rel string, depth int)
	find = func(n *dt.Node, rel string, depth int) {
		if depth > 16 {
			return
		}
		if p, ok := n.LookProperty("compatible"); ok && isGEM(splitNul(p.Value)) {
			paths = append(paths, rel)
		}
		for _, c := range n.Children {
			find(c, path.Join(rel, c.Name), depth+1)
		}
	}
	find(f.RootNode, "", 0)
	// The walk's order: depth first, a node's children by name.
	slices.SortFunc(paths, func(a, b string) int { return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/")) })
	return paths, true
}

// readGEMNode reads the node at rel under base into out when it is there and is a GEM.
func (r fsRoot) readGEMNode(base, rel string, out *[]DTNode) {
	dir := filepath.Join(base, rel)
	ents, err := r.readDir(dir)
	if err != nil {
		return
	}
	r.gemNode(dir, rel, ents, out)
}

func isGEM(compat []string) bool {
	for _, c := range compat {
		if slices.Contains(gemCompatibles, c) {
			return true
		}
	}
	return false
}

// gemNode adds the node in dir (at rel, its entries ents) to out when its compatible
// names a GEM.
func (r fsRoot) gemNode(dir, rel string, ents []fs.DirEntry, out *[]DTNode) {
	if !slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.Name() == "compatible" && !e.IsDir() }) {
		return
	}
	b, err := r.readFile(filepath.Join(dir, "compatible"))
	if err != nil {
		return
	}
	compat := splitNul(b)
	if !isGEM(compat) {
		return
	}
	n := DTNode{Path: "/" + rel, Compatible: compat, Status: "okay", Props: map[string][]byte{}}
	for _, pe := range ents {
		if pe.IsDir() || pe.Name() == "compatible" || pe.Name() == "name" {
			continue
		}
		if v, err := r.readFile(filepath.Join(dir, pe.Name())); err == nil {
			n.Props[pe.Name()] = v
		}
	}
	if st, ok := n.Props["status"]; ok {
		n.Status = strings.TrimRight(string(st), "\x00")
	}
	*out = append(*out, n)
}

func (r fsRoot) walkDT(base, rel string, depth int, out *[]DTNode) {
	if depth > 16 {
		return
	}
	dir := filepath.Join(base, rel)
	ents, err := r.readDir(dir)
	if err != nil {
		return
	}
	r.gemNode(dir, rel, ents, out)
	for _, e := range ents {
		if e.IsDir() {
			r.walkDT(base, filepath.Join(rel, e.Name()), depth+1, out)
		}
	}
}

func splitNul(b []byte) []string {
	var out []string
	for _, s := range bytes.Split(b, []byte{0}) {
		if len(s) > 0 {
			out = append(out, string(s))
		}
	}
	return out
}
