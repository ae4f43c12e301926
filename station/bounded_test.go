package station

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// boundedStation is a station of 3,000 reports, each of its own board type and fixture,
// their steps drawn from 40 step ids (a failure now and then): the store a page once
// grew to megabytes from.
func boundedStation(t testing.TB) (*Server, string) {
	st, err := OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := NewServer(st, log.New(io.Discard, "", 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Now().Add(-72 * time.Hour)
	for i := range 3000 {
		r := &plan.Report{Schema: plan.SchemaVersion, ID: fmt.Sprintf("b%05d", i), Board: fmt.Sprintf("type-%04d", i), Serial: fmt.Sprintf("SN%06d", i),
			MAC: fmt.Sprintf("00:0a:35:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff), Interface: "eth0", Started: t0.Add(time.Duration(i) * time.Minute),
			Seconds: 30 + rng.Float64()*10, Fixture: fmt.Sprintf("fixture-%04d", i), Figures: map[string]float64{}, Failed: []string{}, Verdict: "PASS"}
		for k := range 11 {
			id := fmt.Sprintf("step-%02d", (i+k*7)%40)
			st := plan.StepResult{ID: id, Type: "counters", Pass: true, Summary: "ok", Seconds: rng.Float64() * 5}
			if rng.IntN(40) == 0 {
				st.Pass, st.Reason = false, "rose"
				r.Failed, r.Verdict = append(r.Failed, id), "FAIL"
			}
			r.Steps = append(r.Steps, st)
		}
		b, _ := json.Marshal(r)
		rec := recordOf(r, r.Started.Add(40*time.Second), Meta{Fixture: r.Fixture}, Stored{Attempt: 1})
		if _, err := st.Put(r, b, rec.Received, rec.Meta, Rules{}); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs.URL
}

// TestPageBoundedAtScale: the page of that store is bounded (under 500 KB): each table
// at most its rows with "N more" and the link to all of them, the filters' suggestions
// at most 100, the chart at most 12 lines; the tables and the reports are paged through
// the API, X-Total-Count saying how many there are.
func TestPageBoundedAtScale(t *testing.T) {
	_, base := boundedStation(t)
	_, page := get(t, base+"/")
	t.Logf("page %d bytes, %d rows, %d options", len(page), strings.Count(page, "<tr"), strings.Count(page, "<option"))
	if len(page) > 500<<10 {
		t.Errorf("page of %d bytes, want under 500 KB", len(page))
	}
	if n := strings.Count(page, "<option"); n > 2*maxChoices+3 { // boards, fixtures and the verdict's three
		t.Errorf("%d options", n)
	}
	if n := strings.Count(page, "<polyline"); n > maxSeries {
		t.Errorf("%d chart lines", n)
	}
	rowsAllowed := pageRows + 10
	for _, n := range tableRows {
		rowsAllowed += n + 1
	}
	if n := strings.Count(page, "<tr"); n > rowsAllowed {
		t.Errorf("%d table rows, want at most %d", n, rowsAllowed)
	}
	for _, want := range []string{`more: <a href="/api/tables/pace?">`, `more: <a href="/api/tables/steps?">`, `more: <a href="/api/tables/yield?">`, `<datalist id="boards">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// A table in full, paged, under the page's filters.
	for _, c := range []struct {
		path  string
		total string
		n     int
	}{
		{"/api/tables/steps", "40", 40}, {"/api/tables/pace?offset=2990&limit=50", "3000", 10}, {"/api/tables/pace?board=type-0007", "1", 1},
		{"/api/reports?offset=100&limit=5", "3000", 5}, {"/api/reports?board=type-0042", "1", 1},
	} {
		resp, err := http.Get(base + c.path)
		if err != nil {
			t.Fatal(err)
		}
		var rows []json.RawMessage
		json.NewDecoder(resp.Body).Decode(&rows)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Total-Count") != c.total || len(rows) != c.n {
			t.Errorf("%s: %d, X-Total-Count %q, %d rows; want %s and %d", c.path, resp.StatusCode, resp.Header.Get("X-Total-Count"), len(rows), c.total, c.n)
		}
	}
	for _, bad := range []string{"/api/tables/nope", "/api/tables/pace?limit=0", "/api/reports?offset=-1"} {
		if code, _ := get(t, base+bad); code != 404 && code != 400 {
			t.Errorf("%s: %d", bad, code)
		}
	}
	// The filters keep their query in the page's links (html/template escaped its = and &).
	if _, p := get(t, base+"/?verdict=FAIL&fixture=fixture-0001"); !strings.Contains(p, `href="/api/reports.csv?fixture=fixture-0001&amp;verdict=FAIL"`) {
		t.Errorf("the CSV link lost the filters")
	}
}

// BenchmarkPageChromium is Chromium's load of that page against about:blank's in the
// same run (the bar: under 3 s): scripts run it, not make test.
func BenchmarkPageChromium(b *testing.B) {
	if _, err := exec.LookPath("chromium"); err != nil {
		b.Skip("no chromium")
	}
	_, base := boundedStation(b)
	load := func(u string) time.Duration {
		start := time.Now()
		cmd := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--dump-dom", u)
		if err := cmd.Run(); err != nil {
			b.Fatalf("chromium: %v", err)
		}
		return time.Since(start)
	}
	var page, blank time.Duration
	for b.Loop() {
		blank += load("about:blank")
		page += load(base + "/")
	}
	b.ReportMetric(page.Seconds()/float64(b.N), "s/page")
	b.ReportMetric(blank.Seconds()/float64(b.N), "s/blank")
	b.ReportMetric((page-blank).Seconds()/float64(b.N), "s/render")
	fmt.Fprintf(os.Stderr, "page %v, about:blank %v a load\n", page/time.Duration(b.N), blank/time.Duration(b.N))
}
