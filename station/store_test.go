package station

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// storeUnderTest opens a store; reopen opens the same store again after Close.
type storeUnderTest struct {
	open func(t *testing.T) Store
}

// TestStoreConformance holds both stores to one contract: what Put stores, Get, List,
// Meta and the summary records give back; an id written once; unknown and hostile ids
// not found; everything there again after a reopen; one winner among racing writers.
func TestStoreConformance(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		dir := t.TempDir()
		storeContract(t, storeUnderTest{open: func(t *testing.T) Store {
			st, err := OpenBolt(dir)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}})
	})
	t.Run("postgres", func(t *testing.T) {
		conn := startPostgres(t)
		storeContract(t, storeUnderTest{open: func(t *testing.T) Store {
			st, _, err := OpenStore(t.Context(), "", conn)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}})
	})
}

func decoded(t *testing.T, body []byte) *plan.Report {
	t.Helper()
	r, err := DecodeReport(body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func storeContract(t *testing.T, su storeUnderTest) {
	st := su.open(t)
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	a, b := report("c-a", "zc702", "PASS", 900), report("c-b", "zcu102", "FAIL", 100)
	if _, err := st.Put(decoded(t, b), b, t0.Add(time.Minute), Meta{PostedBy: "line-2", Remote: "10.0.0.9:4000"}, Rules{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(decoded(t, a), a, t0, Meta{PostedBy: "line-1", Remote: "10.0.0.8:4000"}, Rules{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(decoded(t, a), a, t0.Add(time.Hour), Meta{}, Rules{}); !errors.Is(err, ErrExists) {
		t.Errorf("the same report again: %v, want ErrExists", err)
	}
	if _, err := st.Put(decoded(t, a), b, t0.Add(time.Hour), Meta{}, Rules{}); !errors.Is(err, ErrConflict) {
		t.Errorf("another body under a stored id: %v, want ErrConflict", err)
	}
	check := func(st Store, when string) {
		t.Helper()
		if got, err := st.Get("c-a"); err != nil || string(got) != string(a) {
			t.Errorf("%s: Get c-a: %v, body kept: %v", when, err, string(got) == string(a))
		}
		for _, id := range []string{"nope", "c-a\x00", "\xff\xfe", "../c-a", ""} {
			if _, err := st.Get(id); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: Get %q: %v, want ErrNotFound", when, id, err)
			}
		}
		if m := st.Meta("c-b"); m.PostedBy != "line-2" || m.Remote != "10.0.0.9:4000" {
			t.Errorf("%s: meta %+v", when, m)
		}
		list, err := st.List()
		if err != nil || len(list) != 2 || list[0].ID != "c-a" || list[1].ID != "c-b" {
			t.Fatalf("%s: list (oldest first) %+v %v", when, list, err)
		}
		if x := list[0]; x.Board != "zc702" || x.Verdict != "PASS" || !x.Received.Equal(t0) || x.PostedBy != "line-1" || x.TCP["up"] != 900 {
			t.Errorf("%s: summary %+v", when, x)
		}
		recs, err := st.records()
		if err != nil || len(recs) != 2 || len(recs[1].Steps) != 2 || recs[1].Steps[1].Pass || *recs[1].Steps[1].Mbps != 100 {
			t.Errorf("%s: records %+v %v", when, recs, err)
		}
	}
	check(st, "open")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = su.open(t)
	defer st.Close()
	check(st, "reopened")
	// Racing writers of one id: one stores it, the same body is ErrExists, another
	// body ErrConflict; what is stored is one whole body.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	bodies := make([][]byte, 8)
	for i := range errs {
		bodies[i] = report("c-race", "zc702", "PASS", float64(100+i%2))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = st.Put(decoded(t, bodies[i]), bodies[i], t0.Add(2*time.Hour), Meta{}, Rules{})
		}()
	}
	wg.Wait()
	stored, err := st.Get("c-race")
	if err != nil {
		t.Fatal(err)
	}
	won := 0
	for i, err := range errs {
		same := string(bodies[i]) == string(stored)
		switch {
		case err == nil:
			won++
		case errors.Is(err, ErrExists) && same, errors.Is(err, ErrConflict) && !same:
		default:
			t.Errorf("writer %d: %v (its body stored: %v)", i, err, same)
		}
	}
	var r plan.Report
	if won != 1 || json.Unmarshal(stored, &r) != nil {
		t.Errorf("%d writers won; stored %s", won, fmt.Sprint(len(stored)))
	}
}
