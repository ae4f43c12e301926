package nic

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
)

// TestWaitCarrier: the live kernel's wait for a port's carrier returns at once where
// the port has it, returns once it comes (the peer's end of a veth brought up while it
// waits), runs out naming the port where it never comes, and stops with its context.
func TestWaitCarrier(t *testing.T) {
	nstest.Require(t)
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "v0", "p0", peer, 1)
	wait := func(ctx context.Context, timeout time.Duration) error {
		return ns.Run(func() error {
			k, err := OpenKernel(APIAuto)
			if err != nil {
				return err
			}
			defer k.Close()
			w, ok := k.(CarrierWaiter)
			if !ok {
				return errors.New("the live kernel waits for no carrier")
			}
			return w.WaitCarrier(ctx, "v0", timeout)
		})
	}
	if err := wait(context.Background(), time.Second); err != nil {
		t.Fatalf("with carrier: %v", err)
	}
	peer.Exec(t, "ip", "link", "set", "p0", "down")
	done := make(chan error, 1)
	go func() { done <- wait(context.Background(), 20*time.Second) }()
	select {
	case err := <-done:
		t.Fatalf("returned %v before the carrier came", err)
	case <-time.After(300 * time.Millisecond):
	}
	peer.Exec(t, "ip", "link", "set", "p0", "up")
	if err := <-done; err != nil {
		t.Fatalf("the carrier came: %v", err)
	}
	peer.Exec(t, "ip", "link", "set", "p0", "down")
	err := wait(context.Background(), 300*time.Millisecond)
	if !errors.Is(err, ErrNoCarrier) || !strings.Contains(err.Error(), "v0") {
		t.Errorf("no carrier: %v, want ErrNoCarrier naming v0", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if err := wait(ctx, 20*time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("stopped: %v, want context.Canceled", err)
	}
}
