//go:build linux

package experiment

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/tune"
)

// TestTemporaryChangesLeaveTheUsersTune runs two temporary changes (as the speed
// matrix does, one a speed) on an interface the user has tuned: each is given back,
// and the journal holds the user's tune alone, entries and name, so a later revert
// names only it.
func TestTemporaryChangesLeaveTheUsersTune(t *testing.T) {
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "lr0", "lr1", peer, 1)
	state := t.TempDir()
	ns.Do(t, func() error {
		sys, _, closeFn, err := tune.Open("", nic.APIAuto, 5*time.Second)
		if err != nil {
			return err
		}
		defer closeFn()
		store := tune.StoreAt(state)
		user := &tune.Plan{Iface: "lr0", Profile: "mine", Changes: []tune.Change{{Knob: "promisc", Old: "off", New: "on"}}}
		if err := tune.Apply(context.Background(), sys, store, user); err != nil {
			return err
		}
		for _, mtu := range []string{"1400", "1300"} {
			c := Change{Iface: "lr0", StateDir: state, Knob: "mtu", CarrierTimeout: 5 * time.Second}
			var during string
			res, err := c.Run(context.Background(), func(string) (string, error) { return mtu, nil }, func(context.Context) error {
				j, err := store.Load("lr0")
				if err != nil || j == nil {
					return errors.Join(err, errors.New("no journal during the change"))
				}
				during = j.Profiles[len(j.Profiles)-1]
				return nil
			})
			if err != nil {
				return err
			}
			if !res.Restored || res.Before != "1500" || res.After != "1500" || res.During != mtu {
				t.Errorf("mtu %s: %+v", mtu, res)
			}
			if during != "mtu test" {
				t.Errorf("during the change the journal's last name is %q, want \"mtu test\"", during)
			}
		}
		j, err := store.Load("lr0")
		if err != nil || j == nil {
			return errors.Join(err, errors.New("the user's journal is gone"))
		}
		if !reflect.DeepEqual(j.Profiles, []string{"mine"}) {
			t.Errorf("journal names %q after the changes, want only the user's [mine]", j.Profiles)
		}
		if len(j.Entries) != 1 || j.Entries[0].Knob != "promisc" {
			t.Errorf("journal entries after the changes: %+v", j.Entries)
		}
		rj, err := tune.Revert(context.Background(), sys, store, "lr0")
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(rj.Profiles, []string{"mine"}) {
			t.Errorf("revert names %q", rj.Profiles)
		}
		return nil
	})
}
