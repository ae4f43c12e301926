package rawsock

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/netperf/frames"
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
	ns.Do(t, func() (err error) { tx, err = OpenTX(iface, maxLen, true); return })
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
		c := frames.NewCounter(spec.Stream)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			Sink(context.Background(), rx, c, SinkOptions{Duration: 20 * time.Second})
		}()
		const n = 20000
		gs, err := Gen(context.Background(), tx, bl, GenOptions{FPS: 50000, Count: n, EndMarkers: true})
		if err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		r := c.Result(0, 0)
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
		st, _ = Reflect(ctx, rrx, rtx, macB, 0, nil)
	}()
	time.Sleep(200 * time.Millisecond)
	tx, rx := openTX(t, a, "a0", 1514), openRX(t, a, "a0")
	const n = 1200 // 100 cycles of the IMIX: 100 frames of 1518 bytes
	spec := frames.Spec{Src: macA, Dst: macB, Sizes: frames.IMIX, Flows: 1, Stream: 9}
	var r frames.Result
	var err error
	a.Do(t, func() error {
		r, _, err = Trial(context.Background(), tx, rx, spec, GenOptions{FPS: 5000, Count: n, Duration: 10 * time.Second}, time.Second)
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
