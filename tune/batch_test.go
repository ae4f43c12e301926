package tune

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/nic"
)

// ringsNIC is a port with rings as macb answers ethtool -g and takes ethtool -G: each
// request restarts the port (restarts counts them); round makes the driver round what
// it is given (a driver that reads back otherwise than it was written); fail refuses
// every request.
type ringsNIC struct {
	nic.Setter // any other request is a test bug: nil panics
	rx, tx     uint32
	restarts   int
	calls      []string
	round      func(uint32) uint32
	fail       error
}

func (n *ringsNIC) Links() ([]nic.LinkAnswer, error) {
	return []nic.LinkAnswer{{Name: "eth0", RawFlags: 0x10000 | 0x1}}, nil
}

func (n *ringsNIC) Ethtool(string) (*nic.EthtoolAnswer, error) {
	return &nic.EthtoolAnswer{Rings: &nic.Rings{RX: n.rx, TX: n.tx, RXMax: 8192, TXMax: 4096}}, nil
}

func (n *ringsNIC) API() string  { return "netlink" }
func (n *ringsNIC) Close() error { return nil }

func (n *ringsNIC) SetRings(_ string, rx, tx uint32) error {
	n.calls = append(n.calls, fmt.Sprintf("rx %d tx %d", rx, tx))
	if n.fail != nil {
		return n.fail
	}
	if n.round != nil {
		rx, tx = n.round(rx), n.round(tx)
	}
	n.rx, n.tx = rx, tx
	n.restarts++
	return nil
}

// TestRingsOneRequest: a plan that changes both ring depths writes them in one request
// (ethtool -G rx N tx M), so macb restarts the port once, at the tune and at the revert;
// a failure of either gives both back as they were.
func TestRingsOneRequest(t *testing.T) {
	changes := []Change{{Knob: knobRingsRX, Old: "512", New: "4096"}, {Knob: knobRingsTX, Old: "512", New: "1024"}}
	run := func(t *testing.T, n *ringsNIC, hook func(Knob, int) error) (*System, Store, error) {
		sys := &System{Kernel: n, Setter: n, BeforeWrite: hook}
		store := StoreAt(t.TempDir())
		return sys, store, Apply(context.Background(), sys, store, &Plan{Iface: "eth0", Profile: "test", Changes: changes})
	}
	t.Run("tune and revert", func(t *testing.T) {
		n := &ringsNIC{rx: 512, tx: 512}
		sys, store, err := run(t, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n.rx != 4096 || n.tx != 1024 || n.restarts != 1 {
			t.Fatalf("after the tune: rx %d tx %d in %d restarts (%q), want 4096 1024 in one", n.rx, n.tx, n.restarts, n.calls)
		}
		if _, err := Revert(context.Background(), sys, store, "eth0"); err != nil {
			t.Fatal(err)
		}
		if n.rx != 512 || n.tx != 512 || n.restarts != 2 {
			t.Errorf("after the revert: rx %d tx %d in %d restarts (%q), want 512 512 in two", n.rx, n.tx, n.restarts, n.calls)
		}
	})
	t.Run("one ring", func(t *testing.T) {
		n := &ringsNIC{rx: 512, tx: 256}
		sys := &System{Kernel: n, Setter: n}
		if err := Apply(context.Background(), sys, StoreAt(t.TempDir()), &Plan{Iface: "eth0", Profile: "test", Changes: changes[1:]}); err != nil {
			t.Fatal(err)
		}
		if n.rx != 512 || n.tx != 1024 || len(n.calls) != 1 {
			t.Errorf("rx %d tx %d (%q): the RX ring must keep its depth", n.rx, n.tx, n.calls)
		}
	})
	t.Run("stopped before the request", func(t *testing.T) {
		n := &ringsNIC{rx: 512, tx: 512}
		_, _, err := run(t, n, func(k Knob, _ int) error {
			if k.Name == knobRingsTX {
				return errors.New("injected failure")
			}
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "knob rings.tx: injected failure") {
			t.Fatalf("err %v, want the TX ring named", err)
		}
		if n.rx != 512 || n.tx != 512 || len(n.calls) != 0 {
			t.Errorf("rx %d tx %d (%q): nothing may be written", n.rx, n.tx, n.calls)
		}
	})
	t.Run("refused", func(t *testing.T) {
		n := &ringsNIC{rx: 512, tx: 512, fail: errors.New("device busy")}
		_, _, err := run(t, n, nil)
		if err == nil || !strings.Contains(err.Error(), "device busy") || !strings.Contains(err.Error(), "every knob changed before it was restored") {
			t.Fatalf("err %v", err)
		}
		if n.rx != 512 || n.tx != 512 {
			t.Errorf("rx %d tx %d, want them as they were", n.rx, n.tx)
		}
	})
	t.Run("read back otherwise", func(t *testing.T) {
		n := &ringsNIC{rx: 512, tx: 512, round: func(v uint32) uint32 { return min(v, 2048) }}
		_, _, err := run(t, n, nil)
		if err == nil || !strings.Contains(err.Error(), `knob rings.rx: wrote "4096", reads back "2048"`) {
			t.Fatalf("err %v, want the RX ring's read-back named", err)
		}
		if n.rx != 512 || n.tx != 512 || n.restarts != 2 {
			t.Errorf("rx %d tx %d in %d restarts (%q), want 512 512 given back in one more", n.rx, n.tx, n.restarts, n.calls)
		}
	})
}
