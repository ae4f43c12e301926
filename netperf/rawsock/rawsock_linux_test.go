package rawsock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/netperf/frames"
	"golang.org/x/sys/unix"
)

// pair makes two namespaces joined by a veth: a0 in A, b0 in B.
func pair(t *testing.T) (a, b *nstest.NS, macA, macB net.HardwareAddr) {
	t.Helper()
	nstest.Require(t)
	a, b = nstest.New(t), nstest.New(t)
	a.Veth(t, "a0", "b0", b, 1)
	a.Do(t, func() error { i, err := net.InterfaceByName("a0"); macA = i.HardwareAddr; return err })
	b.Do(t, func() error { i, err := net.InterfaceByName("b0"); macB = i.HardwareAddr; return err })
	return
}

func openTX(t *testing.T, ns *nstest.NS, iface string, maxLen int) *TX {
	t.Helper()
	var tx *TX
	ns.Do(t, func() (err error) { tx, err = OpenTX(iface, maxLen, 0, true); return })
	t.Cleanup(func() { tx.Close() })
	return tx
}

func openRX(t *testing.T, ns *nstest.NS, iface string) *RX {
	t.Helper()
	var rx *RX
	ns.Do(t, func() (err error) { rx, err = OpenRX(iface); return })
	t.Cleanup(func() { rx.Close() })
	return rx
}

// TestExactCount: N frames sent at a rate veth keeps up with arrive N times, none lost,
// reordered, duplicated or corrupted, with one-way latency measured.
func TestExactCount(t *testing.T) {
	a, b, macA, macB := pair(t)
	tx, rx := openTX(t, a, "a0", 1514), openRX(t, b, "b0")
	for _, sizes := range [][]int{{64}, {1518}, frames.IMIX} {
		spec := frames.Spec{Src: macA, Dst: macB, Sizes: sizes, Flows: 4, Stream: uint16(len(sizes))}
		bl, err := frames.NewBuilder(spec)
		if err != nil {
			t.Fatal(err)
		}
		var streams *frames.Streams
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			streams, _, _ = Sink(context.Background(), []*RX{rx}, nil, spec.Stream, 1, SinkOptions{Duration: 20 * time.Second})
		}()
		const n = 20000
		gs, err := Gen(context.Background(), []Sender{{TX: tx, B: bl, CPU: -1}}, GenOptions{FPS: 50000, Count: n, EndMarkers: true})
		if err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		r, _ := streams.Result(nil, 0)
		if gs.Sent != n || r.Sent != n || r.Received != n || r.Lost != 0 || r.Reordered != 0 || r.Duplicated != 0 || r.Corrupted != 0 {
			t.Errorf("sizes %v: sent %d, sink %+v", sizes, gs.Sent, r)
		}
		if r.Latency == nil || r.Latency.P50 <= 0 || r.Latency.P50 > int64(50*time.Millisecond) {
			t.Errorf("latency %+v", r.Latency)
		}
		t.Logf("sizes %v: %d frames in %v (%.0f fps), sink %.0f pps, latency %+v", sizes, gs.Sent, gs.Elapsed, float64(gs.Sent)/gs.Elapsed.Seconds(), r.PPS, *r.Latency)
	}
}

// TestReflectorDropReports: a reflector whose TX ring takes frames of up to 600 bytes
// drops the IMIX's 1518-byte frames itself; it tells the sender so in drop reports, and
// the sender counts them apart: every lost frame is the reflector's, none the path's.
func TestReflectorDropReports(t *testing.T) {
	a, b, macA, macB := pair(t)
	var rrx *RX
	b.Do(t, func() (err error) { rrx, err = OpenRXFrames("b0"); return })
	defer rrx.Close()
	rtx := openTX(t, b, "b0", 600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var st ReflectStats
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		st, _ = Reflect(ctx, []*RX{rrx}, []*TX{rtx}, nil, Realtime{}, macB, 0, nil)
	}()
	time.Sleep(200 * time.Millisecond)
	tx, rx := openTX(t, a, "a0", 1514), openRX(t, a, "a0")
	const n = 1200 // 100 cycles of the IMIX: 100 frames of 1518 bytes
	spec := frames.Spec{Src: macA, Dst: macB, Sizes: frames.IMIX, Flows: 1, Stream: 9}
	var r frames.Result
	var err error
	a.Do(t, func() error {
		r, _, err = Trial(context.Background(), []*TX{tx}, []*RX{rx}, nil, spec, GenOptions{FPS: 5000, Count: n, Duration: 10 * time.Second}, time.Second)
		return err
	})
	cancel()
	wg.Wait()
	if r.Sent != n || r.Lost != 100 || r.ReflectorDrops != 100 || r.PathLost() != 0 {
		t.Fatalf("sent %d lost %d, reflector drops %d, path lost %d; reflector %+v", r.Sent, r.Lost, r.ReflectorDrops, r.PathLost(), st)
	}
	if st.Dropped != 100 || st.Reports == 0 {
		t.Fatalf("reflector %+v", st)
	}
	t.Logf("reflector dropped %d, sent %d drop reports; the sender counted %d apart, path lost %d", st.Dropped, st.Reports, r.ReflectorDrops, r.PathLost())
}

// TestSeveralSendersAndRings: two senders, each its own ring, thread and stream, pinned
// to a CPU each where the machine has two, send 200,000 frames in all at a shared rate
// to a sink of two rings in a fanout group: the total is exact, no stream loses,
// reorders or duplicates a frame, both rings took frames, and the CPU time per frame is
// measured.
func TestSeveralSendersAndRings(t *testing.T) {
	a, b, macA, macB := pair(t)
	cpus, err := CPUs(2)
	if err != nil {
		t.Logf("%v: the threads run unpinned", err)
		cpus = []int{-1, -1}
	}
	var rxs []*RX
	b.Do(t, func() (err error) { rxs, err = OpenRXRings("b0", 2, RXRing{}, FanoutHash); return })
	t.Cleanup(func() {
		for _, r := range rxs {
			r.Close()
		}
	})
	const n, flows = 200000, 4
	var senders []Sender
	for i := 0; i < 2; i++ {
		bl, err := frames.NewBuilder(frames.Spec{Src: macA, Dst: macB, Sizes: []int{64}, Flows: flows, FirstFlow: i * flows, Stream: uint16(20 + i)})
		if err != nil {
			t.Fatal(err)
		}
		senders = append(senders, Sender{TX: openTX(t, a, "a0", 1514), B: bl, CPU: cpus[i]})
	}
	var streams *frames.Streams
	var ss SinkStats
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		streams, ss, _ = Sink(context.Background(), rxs, nil, 20, 2, SinkOptions{Duration: 60 * time.Second})
	}()
	gs, err := Gen(context.Background(), senders, GenOptions{FPS: 100000, Count: n, EndMarkers: true})
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	total, per := streams.Result(nil, 0)
	if gs.Sent != n || total.Sent != n || total.Received != n || total.Lost != 0 {
		t.Errorf("sent %d, sink %+v", gs.Sent, total)
	}
	for i, r := range per {
		if r.Sent != gs.Senders[i].Frames || r.Lost != 0 || r.Reordered != 0 || r.Duplicated != 0 || r.Corrupted != 0 || r.Sent == 0 {
			t.Errorf("stream %d: sender sent %d, sink %+v", r.Stream, gs.Senders[i].Frames, r)
		}
	}
	for i, r := range ss.Rings {
		if r.Frames == 0 {
			t.Errorf("ring %d took no frame: the fanout group did not spread the flows (%+v)", i, ss.Rings)
		}
	}
	if gs.CPU <= 0 || ss.CPU <= 0 {
		t.Errorf("CPU time not measured: senders %v, sink %v", gs.CPU, ss.CPU)
	}
	t.Logf("senders %+v: %.0f ns/frame; sink rings %+v: %.0f ns/frame; %d frames in %v (%.0f fps)", gs.Senders, NsPerFrame(gs.CPU, gs.Sent),
		ss.Rings, NsPerFrame(ss.CPU, ss.Handled), gs.Sent, gs.Elapsed, float64(gs.Sent)/gs.Elapsed.Seconds())
}

// TestPacerShares: senders taking turns at one schedule get the run's frames exactly
// once between them, never more than is due.
func TestPacerShares(t *testing.T) {
	p := newPacer(GenOptions{Count: 10000}, time.Now())
	var got uint64
	for i := 0; ; i++ {
		n, _, done := p.claim(uint64(1 + i%7))
		if done {
			break
		}
		if i%3 == 0 && n > 0 {
			p.unclaim(1) // a full ring gives one back
			n--
		}
		got += n
	}
	if got != 10000 {
		t.Fatalf("granted %d frames, want 10000", got)
	}
}

// TestPacedRings: a paced trial's rings (PacedTXFrames, PacedRing) are what the kernel
// takes: the emulated ZC702's PHY loopback rate (5874 a second) gets a TX ring of 256
// frames and an RX ring of 128 blocks of 16 KiB (27 frames a block, 3456 in all), and
// they carry 6000 frames at that rate (both rings turn over) with every frame counted,
// none lost.
func TestPacedRings(t *testing.T) {
	a, b, macA, macB := pair(t)
	const fps, size = 5874, 512
	var tx *TX
	a.Do(t, func() (err error) { tx, err = OpenTX("a0", size-frames.FCS, PacedTXFrames(fps), true); return })
	t.Cleanup(func() { tx.Close() })
	if tx.Frames() != 256 {
		t.Errorf("TX ring of %d frames, want 256", tx.Frames())
	}
	shape := PacedRing(fps, size-frames.FCS)
	if shape.BlockSize != 16<<10 || shape.Blocks != 128 {
		t.Errorf("RX ring %+v, want 128 blocks of 16 KiB", shape)
	}
	var rxs []*RX
	b.Do(t, func() (err error) { rxs, err = OpenRXRings("b0", 1, shape, FanoutHash); return })
	t.Cleanup(func() { rxs[0].Close() })
	spec := frames.Spec{Src: macA, Dst: macB, Sizes: []int{size}, Flows: 4, Stream: 31}
	bl, err := frames.NewBuilder(spec)
	if err != nil {
		t.Fatal(err)
	}
	var streams *frames.Streams
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		streams, _, _ = Sink(context.Background(), rxs, nil, spec.Stream, 1, SinkOptions{Duration: 20 * time.Second})
	}()
	const n = 6000
	gs, err := Gen(context.Background(), []Sender{{TX: tx, B: bl, CPU: -1}}, GenOptions{FPS: fps, Count: n, EndMarkers: true})
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	r, _ := streams.Result(nil, 0)
	if gs.Sent != n || r.Sent != n || r.Received != n || r.Lost != 0 || r.Corrupted != 0 || r.Duplicated != 0 || r.Reordered != 0 {
		t.Errorf("sent %d, sink %+v", gs.Sent, r)
	}
}

// TestOpenTXRings: rings whose sockets open in a namespace's thread and whose set-up
// runs on other goroutines beside alongside's receive ring work in that namespace (the
// port exists nowhere else): each ring's frames arrive on the peer, counted exactly. A
// failing alongside, or a port that is not there, leaves no socket open.
func TestOpenTXRings(t *testing.T) {
	a, b, macA, macB := pair(t)
	var txs []*TX
	var loop *RX
	a.Do(t, func() (err error) {
		txs, err = OpenTXRings("a0", 2, 1514, 0, true, func() (err error) { loop, err = OpenRX("a0"); return })
		return
	})
	t.Cleanup(func() {
		loop.Close()
		for _, tx := range txs {
			tx.Close()
		}
	})
	if len(txs) != 2 || loop == nil {
		t.Fatalf("%d TX rings and receive ring %v, want 2 and one", len(txs), loop)
	}
	rx := openRX(t, b, "b0")
	for i, tx := range txs {
		bl, err := frames.NewBuilder(frames.Spec{Src: macA, Dst: macB, Sizes: []int{64}, Flows: 1, Stream: uint16(30 + i)})
		if err != nil {
			t.Fatal(err)
		}
		var streams *frames.Streams
		var wg sync.WaitGroup
		wg.Go(func() {
			streams, _, _ = Sink(context.Background(), []*RX{rx}, nil, uint16(30+i), 1, SinkOptions{Duration: 20 * time.Second})
		})
		gs, err := Gen(context.Background(), []Sender{{TX: tx, B: bl, CPU: -1}}, GenOptions{FPS: 20000, Count: 1000, EndMarkers: true})
		if err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if r, _ := streams.Result(nil, 0); gs.Sent != 1000 || r.Received != 1000 || r.Lost != 0 {
			t.Errorf("ring %d: sent %d, sink %+v", i, gs.Sent, r)
		}
	}

	before := packetSockets(t)
	a.Do(t, func() error {
		_, err := OpenTXRings("a0", 2, 1514, 0, true, func() error { return errors.New("alongside failed") })
		if err == nil || err.Error() != "alongside failed" {
			return fmt.Errorf("failing alongside: %v, want its error", err)
		}
		if _, err = OpenTXRings("nosuch0", 2, 1514, 0, true, nil); err == nil || !strings.Contains(err.Error(), "nosuch0") {
			return fmt.Errorf("missing port: %v, want an error naming it", err)
		}
		return nil
	})
	if after := packetSockets(t); after != before {
		t.Errorf("%d packet sockets open after the failures, %d before", after, before)
	}
}

// packetSockets counts this process's open AF_PACKET sockets (the sockets its file
// descriptors are, against /proc/net/packet's inodes being in every namespace alike).
func packetSockets(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		var st unix.Stat_t
		if unix.Stat("/proc/self/fd/"+fd.Name(), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			continue
		}
		if d, err := unix.GetsockoptInt(atoi(fd.Name()), unix.SOL_SOCKET, unix.SO_DOMAIN); err == nil && d == unix.AF_PACKET {
			n++
		}
	}
	return n
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
