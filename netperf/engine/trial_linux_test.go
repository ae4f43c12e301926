package engine

import (
	"os"
	"sync"
	"testing"

	"github.com/zynqnet/linerate/internal/nstest"
)

// TestCloseBehind: a trialer's rings closed behind the caller are closed once the
// group it was given is done; given none, they are closed when CloseBehind returns.
func TestCloseBehind(t *testing.T) {
	nstest.Require(t)
	a, b := nstest.New(t), nstest.New(t)
	a.Veth(t, "a0", "b0", b, 1)
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	open := func() *Trialer {
		var tr *Trialer
		a.Do(t, func() error {
			p, err := LookupPort("/", "a0", 1000)
			if err != nil {
				return err
			}
			tr, err = OpenTrialer(TrialerConfig{Root: "/", Port: p, Dst: p.MAC, RXPort: p.Name, MaxLen: 508, MaxFPS: 1000, Kind: "round-trip"})
			return err
		})
		return tr
	}
	before := fds()
	tr := open()
	if n := fds(); n < before+2 {
		t.Fatalf("%d fds with a TX and an RX ring open, %d before", n, before)
	}
	var behind sync.WaitGroup
	tr.CloseBehind(&behind)
	behind.Wait()
	if n := fds(); n != before {
		t.Errorf("%d fds once the rings closed behind, %d before they opened", n, before)
	}
	tr = open()
	tr.CloseBehind(nil)
	if n := fds(); n != before {
		t.Errorf("%d fds after CloseBehind(nil), %d before the rings opened", n, before)
	}
}
