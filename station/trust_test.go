package station

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/plan"
)

// eachStore runs fn against a station with opts over bbolt and over a PostgreSQL the
// test starts.
func eachStore(t *testing.T, opts Options, fn func(t *testing.T, base string)) {
	t.Run("bbolt", func(t *testing.T) {
		st, err := OpenBolt(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, serveStore(t, st, opts))
	})
	t.Run("postgres", func(t *testing.T) {
		st, _, err := OpenStore(t.Context(), "", startPostgres(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, serveStore(t, st, opts))
	})
}

func serveStore(t *testing.T, st Store, opts Options) string {
	t.Helper()
	srv, err := NewServer(st, log.New(io.Discard, "", 0), opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs.URL
}

// traced is a report of serial with what produced it: the plan's text (and hash), an
// image build, a kernel, an operator.
func traced(t *testing.T, id, serial, operator, build, planText string) []byte {
	t.Helper()
	var r plan.Report
	if err := json.Unmarshal(report(id, "zc702", "PASS", 941), &r); err != nil {
		t.Fatal(err)
	}
	r.Serial, r.Operator, r.Kernel, r.UBoot = serial, operator, "6.1.192", "2023.01"
	r.Build = &plan.Build{ID: build, Linerate: "v1.0", Board: "zc702"}
	sum := sha256.Sum256([]byte(planText))
	r.PlanSHA256, r.Plan.Text, r.Plan.SHA256 = hex.EncodeToString(sum[:]), planText, hex.EncodeToString(sum[:])
	b, _ := json.Marshal(r)
	return b
}

// TestTraceability on both stores: the station stores and serves what produced each
// report with its own version, filters the list by each, and refuses a report whose plan
// text is not what its hash says; given the line's plans, it flags a report of another
// plan, or refuses it under reject.
func TestTraceability(t *testing.T) {
	const line, bench = "name: line\nsteps: []\n", "name: bench\nsteps: []\n"
	sum := sha256.Sum256([]byte(line))
	plans := Plans{hex.EncodeToString(sum[:]): "line.yaml"}
	eachStore(t, Options{Version: "v7.7", Plans: plans}, func(t *testing.T, base string) {
		for _, r := range [][]byte{traced(t, "t1", "S1", "ann", "b1", line), traced(t, "t2", "S2", "bob", "b1", line), traced(t, "t3", "S3", "ann", "b2", bench)} {
			if code, msg := post(t, base, r); code != 201 {
				t.Fatalf("%d %s", code, msg)
			}
		}
		var served struct {
			Station  string       `json:"station_version"`
			Operator string       `json:"operator"`
			Build    plan.Build   `json:"build"`
			Flags    []ReportFlag `json:"flags"`
		}
		_, body := get(t, base+"/api/reports/t3")
		if err := json.Unmarshal([]byte(body), &served); err != nil || served.Station != "v7.7" || served.Operator != "ann" || served.Build.ID != "b2" ||
			len(served.Flags) != 1 || served.Flags[0].Kind != FlagUnknownPlan || !strings.Contains(served.Flags[0].Text, "is not one of the station's plans (line.yaml)") {
			t.Errorf("served: %+v %v", served, err)
		}
		for q, want := range map[string]string{"operator=ann": "t1 t3", "operator=bob": "t2", "build=b1": "t1 t2", "plan=" + hex.EncodeToString(sum[:])[:10]: "t1 t2",
			"kernel=6.1.192&uboot=2023.01": "t1 t2 t3", "station_version=v7.7": "t1 t2 t3", "station_version=v1": "", "plan=abc": ""} {
			var list []Summary
			_, body := get(t, base+"/api/reports?"+q)
			json.Unmarshal([]byte(body), &list)
			var ids []string
			for _, s := range list {
				ids = append(ids, s.ID)
			}
			if strings.Join(ids, " ") != want {
				t.Errorf("?%s: %v, want %s", q, ids, want)
			}
		}
		if _, page := get(t, base+"/?operator=bob"); !strings.Contains(page, ">S2<") || strings.Contains(page, ">S1<") {
			t.Errorf("the page's operator filter")
		}
		var lied plan.Report
		json.Unmarshal(traced(t, "t4", "S4", "ann", "b1", line), &lied)
		lied.Plan.Text = bench
		b, _ := json.Marshal(lied)
		if code, msg := post(t, base, b); code != 422 || !strings.Contains(msg, "the plan's text hashes to") {
			t.Errorf("a plan that is not its hash: %d %s", code, msg)
		}
	})
	eachStore(t, Options{Plans: plans, PlanPolicy: Reject}, func(t *testing.T, base string) {
		if code, msg := post(t, base, traced(t, "r1", "S1", "ann", "b1", bench)); code != 409 || !strings.Contains(msg, "is not one of the station's plans (line.yaml)") {
			t.Errorf("reject: %d %s", code, msg)
		}
		if code, _ := get(t, base+"/api/reports/r1"); code != 404 {
			t.Errorf("a refused report was stored")
		}
		if code, msg := post(t, base, traced(t, "r2", "S1", "ann", "b1", line)); code != 201 {
			t.Errorf("the line's plan: %d %s", code, msg)
		}
	})
}
