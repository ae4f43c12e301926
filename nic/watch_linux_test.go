package nic

import (
	"context"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
)

// TestWatchStartedCounters: a watch tells its start the port's state and every error
// counter as its first read found them, the same as a read of its own (a run's
// baseline comes from there, not from a second read).
func TestWatchStartedCounters(t *testing.T) {
	nstest.Require(t)
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "v0", "p0", peer, 1)
	var state string
	var got map[string]uint64
	err := ns.Run(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		w := Watcher{Iface: "v0", API: APIAuto, Started: func(s string, c map[string]uint64) {
			state, got = s, c
			cancel()
		}}
		_, err := w.Watch(ctx, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]uint64
	if err := ns.Run(func() error {
		rd, closeFn, err := Open("", APIAuto)
		if err != nil {
			return err
		}
		defer closeFn()
		st, err := rd.LinkStats("v0")
		want = st.ErrorCounters()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if state == "" || len(got) != len(ErrorCounterNames) {
		t.Fatalf("started with %q and %d counters %v, want the state and %d", state, len(got), got, len(ErrorCounterNames))
	}
	for _, n := range ErrorCounterNames {
		if v, ok := got[n]; !ok || v != want[n] {
			t.Errorf("%s: started with %d (%v), a read gives %d", n, v, ok, want[n])
		}
	}
}
