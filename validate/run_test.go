package validate

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// A board without a clock takes the time of day from the station's Date header.
func TestStationTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "HEAD" {
			t.Errorf("method %s, want HEAD", r.Method)
		}
	}))
	defer srv.Close()
	got, ok := stationTime(context.Background(), nil, "", srv.URL+"/api/reports")
	if !ok || time.Since(got).Abs() > 5*time.Second {
		t.Fatalf("station time %v %v, want about now", got, ok)
	}
	if _, ok := stationTime(context.Background(), nil, "http://127.0.0.1:1/"); ok {
		t.Fatal("a station that is down gave a time")
	}
}

// A figure that is not a number fails its step with an internal error, and the report
// can still be written: the run always ends in a verdict and a report.
func TestSettleNonFinite(t *testing.T) {
	rep := &plan.Report{Steps: []plan.StepResult{
		{ID: "ok", Pass: true, Measured: map[string]float64{"mbps": 941}},
		{ID: "odd", Pass: true, Measured: map[string]float64{"p99_us": math.NaN(), "loss_pct": math.Inf(1)}},
	}, Figures: map[string]float64{"odd_p99_us": math.NaN(), "ok_mbps": 941}}
	settle(rep)
	if rep.Verdict != "FAIL" || len(rep.Failed) != 1 || rep.Failed[0] != "odd" || !strings.Contains(rep.Steps[1].Reason, "internal error") {
		t.Fatalf("verdict %s, failed %v, reason %q", rep.Verdict, rep.Failed, rep.Steps[1].Reason)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatalf("the settled report does not encode: %v", err)
	}
	if _, ok := rep.Figures["ok_mbps"]; !ok {
		t.Fatal("a finite figure was dropped")
	}
}

// A whole run over a captured tree (no kernel needed): a link step, the verdict line on
// the console, the JSON and JUnit reports in the report directory.
func TestValidationRunOnTree(t *testing.T) {
	root := t.TempDir()
	for f, v := range map[string]string{"carrier": "1", "speed": "100", "duplex": "full", "operstate": "up"} {
		p := filepath.Join(root, "sys/class/net/eth9", f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(v+"\n"), 0o644)
	}
	plan, err := Parse([]byte("board: zc702\ninterface: eth9\nsteps:\n  - id: link\n    type: link\n    speed_mbps: 1000\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var console strings.Builder
	dir := t.TempDir()
	res, err := (&Validation{Plan: plan, Root: root, ReportDir: dir, Serial: "S1", Console: &console, Version: "test"}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Verdict != "FAIL" || !strings.Contains(console.String(), "LINERATE FAIL board=zc702 serial=S1 ") || !strings.Contains(console.String(), "link at 100 Mbit/s, want 1000") {
		t.Fatalf("verdict %s, console:\n%s", res.Report.Verdict, console.String())
	}
	for _, ext := range []string{".json", ".xml"} {
		if _, err := os.Stat(filepath.Join(dir, res.Report.ID+ext)); err != nil {
			t.Errorf("report %s: %v", ext, err)
		}
	}
}
