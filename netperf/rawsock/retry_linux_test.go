package rawsock

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/netperf/frames"
)

// rxPackets is b0's received frames, read in ns.
func rxPackets(t *testing.T, ns *nstest.NS) uint64 {
	t.Helper()
	var n uint64
	ns.Do(t, func() error {
		b, err := os.ReadFile("/sys/class/net/b0/statistics/rx_packets")
		if err == nil {
			n, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		}
		return err
	})
	return n
}

// TestRetryWhenFull: frames the link refused (no carrier: the kernel puts each back as
// queued) fill the ring; once the carrier is back, Kick with nothing new committed has
// the kernel send them all, and the ring takes frames again. Before, a full ring of
// refused frames was never asked for again: a sender at full rate stopped for good
// after a link loss.
func TestRetryWhenFull(t *testing.T) {
	a, b, macA, macB := pair(t)
	var tx *TX
	a.Do(t, func() (err error) { tx, err = OpenTX("a0", 60, 1, true); return })
	defer tx.Close()
	bl, _ := frames.NewBuilder(frames.Spec{Src: macA, Dst: macB, Sizes: []int{64}, Flows: 1})
	b.Exec(t, "ip", "link", "set", "b0", "down")
	before := rxPackets(t, b)
	for seq := uint64(0); ; seq++ {
		slot, err := tx.Slot()
		if err != nil {
			t.Fatal(err)
		}
		if slot == nil {
			break
		}
		tx.CommitAs(bl.Frame(slot, seq, 0), bl.Key(seq))
		if err := tx.Kick(); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := tx.Unsent(); n != tx.Frames() {
		t.Fatalf("%d of the ring's %d frames queued with the link down", n, tx.Frames())
	}
	b.Exec(t, "ip", "link", "set", "b0", "up")
	deadline := time.Now().Add(5 * time.Second)
	for n, _ := tx.Unsent(); n > 0 && time.Now().Before(deadline); n, _ = tx.Unsent() {
		if err := tx.Kick(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, _ := tx.Unsent(); n > 0 {
		t.Fatalf("%d frames still queued 5 s after the carrier came back", n)
	}
	if got := rxPackets(t, b) - before; got < uint64(tx.Frames()) {
		t.Errorf("the peer got %d frames, want the ring's %d", got, tx.Frames())
	}
	if slot, err := tx.Slot(); slot == nil || err != nil {
		t.Errorf("no free slot after the ring was sent (%v)", err)
	}
	tx.Close()
	if err := tx.Flush(); err != nil {
		t.Errorf("Flush of a closed ring with nothing committed: %v", err)
	}
	if n, _ := tx.Unsent(); n != 0 {
		t.Errorf("a closed ring has %d frames unsent", n)
	}
}

// fullRate is a veth pair and a line-rate ring on a0 with a builder of 64-byte frames to
// b0: the peer's namespace, the ring, the builder.
func fullRate(t *testing.T) (*nstest.NS, *TX, *frames.Builder) {
	t.Helper()
	a, b, macA, macB := pair(t)
	var tx *TX
	a.Do(t, func() (err error) { tx, err = OpenTX("a0", 60, 0, true); return })
	t.Cleanup(func() { tx.Close() })
	bl, _ := frames.NewBuilder(frames.Spec{Src: macA, Dst: macB, Sizes: []int{64}, Flows: 1})
	return b, tx, bl
}

// TestGenThroughLinkLoss: gen at full rate keeps sending after the link comes back
// from a loss in mid-run, and its count of frames sent is what the peer received: the
// frames refused while the link was down were sent when it came back.
func TestGenThroughLinkLoss(t *testing.T) {
	b, tx, bl := fullRate(t)
	before := rxPackets(t, b)
	type result struct {
		st  GenStats
		err error
	}
	done := make(chan result)
	go func() {
		st, err := Gen(context.Background(), []Sender{{TX: tx, B: bl, CPU: -1}}, GenOptions{Duration: 3 * time.Second})
		done <- result{st, err}
	}()
	time.Sleep(500 * time.Millisecond)
	b.Exec(t, "ip", "link", "set", "b0", "down")
	time.Sleep(700 * time.Millisecond)
	b.Exec(t, "ip", "link", "set", "b0", "up")
	time.Sleep(800 * time.Millisecond)
	mid := rxPackets(t, b)
	time.Sleep(500 * time.Millisecond)
	late := rxPackets(t, b)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	got := rxPackets(t, b) - before
	t.Logf("sent %d, the peer received %d (%d in 0.5 s, 0.8 s after the link came back)", r.st.Sent, got, late-mid)
	if late == mid {
		t.Error("nothing sent after the link came back")
	}
	if r.st.Sent != got || r.st.Unsent != 0 {
		t.Errorf("gen counted %d frames sent (%d unsent), the peer received %d", r.st.Sent, r.st.Unsent, got)
	}
}

// TestGenLinkDownAtEnd: a link lost for the run's last second leaves the ring full of
// frames the port never took: they are counted apart (Unsent), not as sent, and what
// gen counts as sent is what the peer received.
func TestGenLinkDownAtEnd(t *testing.T) {
	b, tx, bl := fullRate(t)
	before := rxPackets(t, b)
	down := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		_, err := b.Try("ip", "link", "set", "b0", "down")
		down <- err
	}()
	st, err := Gen(context.Background(), []Sender{{TX: tx, B: bl, CPU: -1}}, GenOptions{Duration: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-down; err != nil {
		t.Fatal(err)
	}
	got := rxPackets(t, b) - before
	t.Logf("sent %d, unsent %d, the peer received %d (ring of %d)", st.Sent, st.Unsent, got, tx.Frames())
	if st.Unsent == 0 || st.Unsent > uint64(tx.Frames()) {
		t.Errorf("%d frames unsent, want some, at most the ring's %d", st.Unsent, tx.Frames())
	}
	if st.Sent != got {
		t.Errorf("gen counted %d frames sent, the peer received %d", st.Sent, got)
	}
}
