package station

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// hangReport is the report that hung the station for good: a step whose seconds is
// 1e39 (finite in JSON, +Inf as the index's float32), whose duration bucket panicked
// while the page held the index's read lock.
func hangReport(t *testing.T, id string) (*plan.Report, []byte) {
	t.Helper()
	var r plan.Report
	if err := json.Unmarshal(report(id, "zc702", "PASS", 941), &r); err != nil {
		t.Fatal(err)
	}
	r.Steps[1].Seconds = 1e39
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return &r, b
}

// everyPage loads each of the station's pages and feeds with a deadline: a station
// that hangs fails the test instead of hanging it.
func everyPage(t *testing.T, base, id, newID string) {
	t.Helper()
	c := &http.Client{Timeout: 15 * time.Second}
	for _, p := range []string{"/", "/?board=zc702", "/api/reports", "/api/reports.csv", "/api/alarms", "/api/live", "/metrics",
		"/reports/" + id, "/api/reports/" + id, "/api/reports/" + id + "/junit.xml"} {
		resp, err := c.Get(base + p)
		if err != nil {
			t.Fatalf("GET %s: %v (the station hangs)", p, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", p, resp.Status)
		}
	}
	resp, err := c.Post(base+"/api/reports", "application/json", strings.NewReader(string(report(newID, "zc702", "PASS", 940))))
	if err != nil {
		t.Fatalf("POST after the pages: %v (the station hangs)", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("POST after the pages: %s", resp.Status)
	}
}

// TestOneReportHang: the door refuses the report that hung the station (422 naming the
// field), and a store that holds one (written before the door checked) still serves
// every page, the API, /metrics and posts, after a restart too.
func TestOneReportHang(t *testing.T) {
	dir := t.TempDir()
	st, hs := newServer(t, dir)
	r, body := hangReport(t, "hang-1")
	code, msg := post(t, hs.URL, body)
	if code != http.StatusUnprocessableEntity || !strings.Contains(msg, "steps[1] (tcp-up).seconds 1e+39") {
		t.Fatalf("the hang report: %d %q, want 422 naming steps[1] (tcp-up).seconds", code, msg)
	}
	if code, msg := post(t, hs.URL, report("good-1", "zc702", "PASS", 941)); code != http.StatusCreated {
		t.Fatalf("a good report: %d %s", code, msg)
	}
	everyPage(t, hs.URL, "good-1", "good-2")
	hs.Close()

	// An older station stored it: the index and every page take it.
	if _, err := st.Put(r, body, time.Now(), Meta{}, Rules{}); err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(st, log.New(io.Discard, "", 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs2 := httptest.NewServer(srv)
	defer hs2.Close()
	everyPage(t, hs2.URL, r.ID, "good-3")
	everyPage(t, hs2.URL, r.ID, "good-4") // the second view of the page hung the station before
	st.Close()
}

// TestPanicLeavesNoLock: a panic while a request reads the index lets its lock go.
func TestPanicLeavesNoLock(t *testing.T) {
	st, hs := newServer(t, t.TempDir())
	defer st.Close()
	defer hs.Close()
	srv, err := NewServer(st, log.New(io.Discard, "", 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() { recover() }()
		srv.withView(map[string]string{}, func([]*row, int) { panic("a bug in a table") })
	}()
	done := make(chan struct{})
	go func() {
		srv.takeLocked(&record{Summary: Summary{ID: "x", Board: "zc702", Verdict: "PASS", Received: time.Now()}})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the index's lock is still held after a panic under it")
	}
}
