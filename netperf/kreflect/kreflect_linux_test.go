//go:build linux && !arm && !arm64

package kreflect

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/rawsock"
)

// TestMain: with KREFLECT_HOLD=IFACE the test binary attaches a reflector to IFACE, says
// so and waits to be killed (TestDetachedWhenKilled).
func TestMain(m *testing.M) {
	if name := os.Getenv("KREFLECT_HOLD"); name != "" {
		r, err := Open(name)
		if err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("attached\n")
		time.Sleep(time.Hour)
		r.Close()
		return
	}
	os.Exit(m.Run())
}

type ends struct {
	a, b       *nstest.NS
	macA, macB net.HardwareAddr
}

// pair: namespaces A and B joined by a veth a0-b0, with IPv4 addresses.
func pair(t *testing.T) ends {
	t.Helper()
	nstest.Require(t)
	e := ends{a: nstest.New(t), b: nstest.New(t)}
	e.a.Veth(t, "a0", "b0", e.b, 1)
	e.a.Exec(t, "ip", "addr", "add", "198.18.7.1/24", "dev", "a0")
	e.b.Exec(t, "ip", "addr", "add", "198.18.7.2/24", "dev", "b0")
	e.a.Do(t, func() error { i, err := net.InterfaceByName("a0"); e.macA = i.HardwareAddr; return err })
	e.b.Do(t, func() error { i, err := net.InterfaceByName("b0"); e.macB = i.HardwareAddr; return err })
	return e
}

// echoes sends each frame out of a0 and counts those that come back whole with their
// MACs swapped, within a second of the last. (The kernel takes a frame's outer VLAN tag
// off as it receives it, and carries it beside the frame: a frame comes back as the
// end of what was sent from its Ethernet type on, the tag's place in its MACs' wake.)
func (e ends) echoes(t *testing.T, fs [][]byte) int { return e.echoesFrom(t, 1514, fs) }

// echoesFrom is echoes from a TX ring for frames of up to maxLen bytes: up to the port's
// MTU and Ethernet header, each frame goes whole into its skb's head; longer, the head
// holds its Ethernet header and the rest hangs on a page (rawsock's linearTX), and so it
// reaches b0's ingress.
func (e ends) echoesFrom(t *testing.T, maxLen int, fs [][]byte) int {
	t.Helper()
	var rx *rawsock.RX
	var tx *rawsock.TX
	e.a.Do(t, func() (err error) {
		if rx, err = rawsock.OpenRXFrames("a0"); err != nil {
			return err
		}
		tx, err = rawsock.OpenTX("a0", maxLen, 64, true)
		return err
	})
	if (maxLen <= 1514) != tx.Linear() {
		t.Fatalf("a TX ring for %d-byte frames: linear %v", maxLen, tx.Linear())
	}
	defer rx.Close()
	defer tx.Close()
	for _, f := range fs {
		slot, err := tx.Slot()
		if err != nil || slot == nil {
			t.Fatalf("TX slot: %v", err)
		}
		tx.Commit(copy(slot, f))
	}
	if err := tx.Flush(); err != nil {
		t.Fatal(err)
	}
	got := 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		rx.Poll(50*time.Millisecond, func(f []byte, _ int64, _ bool) {
			for _, s := range fs {
				if len(f) >= 12 && bytes.Equal(f[:6], e.macA) && bytes.Equal(f[6:12], e.macB) && sameTail(s, f[12:]) {
					got++
					return
				}
			}
		})
	}
	return got
}

func build(t *testing.T, spec frames.Spec, n int) [][]byte {
	t.Helper()
	bl, err := frames.NewBuilder(spec)
	if err != nil {
		t.Fatal(err)
	}
	var fs [][]byte
	for i := range n {
		f := make([]byte, bl.FrameLen(uint64(i)))
		bl.Frame(f, uint64(i), time.Now().UnixNano())
		fs = append(fs, f)
	}
	return fs
}

// TestReflects: attached to b0, the program sends back test frames addressed to b0
// (untagged, tagged, and with a second tag outside the first), MACs swapped
// and the rest as it came, and no other frame: one for another MAC, a UDP datagram to
// the test port without a test frame's magic. The port's own traffic goes on to the
// stack (a ping answers). Its counts say so. Closed, it answers nothing.
func TestReflects(t *testing.T) {
	e := pair(t)
	var r *Reflector
	e.b.Do(t, func() (err error) { r, err = Open("b0"); return })
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	spec := frames.Spec{Src: e.macA, Dst: e.macB, Sizes: []int{128}, Flows: 1, Stream: 7}
	if got := e.echoes(t, build(t, spec, 5)); got != 5 {
		t.Errorf("untagged: %d of 5 test frames came back", got)
	}
	spec.VLAN = 100
	if got := e.echoes(t, build(t, spec, 5)); got != 5 {
		t.Errorf("tagged 100: %d of 5 test frames came back", got)
	}
	// An 802.1ad tag outside the 802.1Q one: the kernel takes the outer one off, and the
	// program finds the inner one in the frame.
	var qinq [][]byte
	for _, f := range build(t, spec, 5) {
		qinq = append(qinq, slices.Concat(f[:12], []byte{0x88, 0xa8, 0, 200}, f[12:]))
	}
	if got := e.echoes(t, qinq); got != 5 {
		t.Errorf("tagged 200 then 100: %d of 5 test frames came back", got)
	}
	// Sent from a ring whose frames are not linear: the program pulls the headers it
	// reads into the skb's head.
	if got := e.echoesFrom(t, 9018, build(t, spec, 5)); got != 5 {
		t.Errorf("paged, tagged: %d of 5 test frames came back", got)
	}
	spec.VLAN = 0
	if got := e.echoesFrom(t, 9018, build(t, spec, 5)); got != 5 {
		t.Errorf("paged: %d of 5 test frames came back", got)
	}
	other := frames.Spec{Src: e.macA, Dst: net.HardwareAddr{2, 0, 0, 0, 0, 0x99}, Sizes: []int{128}, Flows: 1}
	notTest := build(t, frames.Spec{Src: e.macA, Dst: e.macB, Sizes: []int{128}, Flows: 1}, 1)[0]
	notTest[14+20+8] ^= 0xff // the magic
	if got := e.echoes(t, append(build(t, other, 3), notTest)); got != 0 {
		t.Errorf("%d frames that are not test frames for b0 came back", got)
	}
	if out, err := e.a.Try("ping", "-c", "2", "-i", "0.2", "-W", "2", "198.18.7.2"); err != nil {
		t.Errorf("ping through the port with the reflector on it: %v\n%s", err, out)
	}
	c, err := r.Counts()
	if err != nil {
		t.Fatal(err)
	}
	// ARP, the ping, the four frames above; IPv6's own frames may add to foreign.
	if c.Reflected != 25 || c.Foreign < 4 {
		t.Errorf("counts: %+v, want 25 reflected and at least 4 foreign", c)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r = nil
	if got := e.echoes(t, build(t, spec, 3)); got != 0 {
		t.Errorf("closed: %d of 3 test frames came back", got)
	}
}

// TestDetachedWhenKilled: the attachment ends with the process that holds it, however it
// ends: a reflector killed with SIGKILL leaves nothing on the port that answers.
func TestDetachedWhenKilled(t *testing.T) {
	e := pair(t)
	cmd := exec.Command("ip", "netns", "exec", e.b.Name, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KREFLECT_HOLD=b0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "attached" {
		t.Fatalf("the holder: %q", line)
	}
	spec := frames.Spec{Src: e.macA, Dst: e.macB, Sizes: []int{128}, Flows: 1, Stream: 9}
	if got := e.echoes(t, build(t, spec, 3)); got != 3 {
		t.Fatalf("held by another process: %d of 3 test frames came back", got)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got := e.echoes(t, build(t, spec, 3)); got != 0 {
		t.Errorf("its process killed: %d of 3 test frames came back", got)
	}
}

// sameTail says whether tail (a frame from its Ethernet type on, as it came back) is the
// end of sent, but for the UDP checksum: the TX ring has an untagged frame's finished by
// the port (rawsock's checksum offload), and veth leaves it as the ring wrote it.
func sameTail(sent, tail []byte) bool {
	if len(tail) > len(sent) || len(tail) < 2 {
		return false
	}
	csum := 14 + 20 + 6 - 12
	if et := tail[0:2]; bytes.Equal(et, []byte{0x81, 0x00}) || bytes.Equal(et, []byte{0x88, 0xa8}) {
		csum += 4
	}
	end := sent[len(sent)-len(tail):]
	for i := range tail {
		if tail[i] != end[i] && i != csum && i != csum+1 {
			return false
		}
	}
	return true
}
