package station

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
	bolt "go.etcd.io/bbolt"
)

// mutate is report(id) changed by fn, re-encoded.
func mutate(id string, fn func(r *plan.Report)) []byte {
	var r plan.Report
	json.Unmarshal(report(id, "zc702", "PASS", 900), &r)
	fn(&r)
	b, _ := json.Marshal(r)
	return b
}

// TestDoor: what the station refuses at the door, each with the status and reason, and
// nothing of it stored.
func TestDoor(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	defer hs.Close()
	many := func(n int) map[string]float64 {
		m := map[string]float64{}
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("f%d", i)] = 1
		}
		return m
	}
	for _, c := range []struct {
		name string
		body []byte
		code int
		want string
	}{
		{"PASS with a failed step", mutate("v1", func(r *plan.Report) { r.Steps[1].Pass = false }), 422, "verdict PASS, but its steps say FAIL (failed: tcp-up)"},
		{"FAIL with every step passed", mutate("v2", func(r *plan.Report) { r.Verdict, r.Failed = "FAIL", []string{"tcp-up"} }), 422, "verdict FAIL, but its steps say PASS"},
		{"failed list wrong", mutate("v3", func(r *plan.Report) { r.Verdict, r.Steps[1].Pass, r.Failed = "FAIL", false, []string{"link"} }), 422, "failed lists link, but the steps that failed are tcp-up"},
		{"id .", mutate(".", func(*plan.Report) {}), 422, "id: want"},
		{"id ..", mutate("..", func(*plan.Report) {}), 422, "id: want"},
		{"id ?", mutate("a?b", func(*plan.Report) {}), 422, "id: want"},
		{"id #", mutate("a#b", func(*plan.Report) {}), 422, "id: want"},
		{"id %2F", mutate("a%2Fb", func(*plan.Report) {}), 422, "id: want"},
		{"id too long", mutate(strings.Repeat("x", MaxIDLen+1), func(*plan.Report) {}), 422, "id: want"},
		{"newline in the serial", mutate("n1", func(r *plan.Report) { r.Serial = "SN1\nstation: report forged" }), 422, "serial: want"},
		{"absurd figure", mutate("f1", func(r *plan.Report) { r.Figures["tcp-up_mbps"] = 1.7e308 }), 422, "figure tcp-up_mbps = 1.7e+308"},
		{"absurd measurement", mutate("f2", func(r *plan.Report) { r.Steps[1].Measured["mbps"] = -1e300 }), 422, "steps[1] (tcp-up).measured: mbps = -1e+300"},
		{"too many figures", mutate("f3", func(r *plan.Report) { r.Figures = many(MaxFigures + 1) }), 422, "figures: at most"},
		{"too many steps", mutate("s1", func(r *plan.Report) {
			for i := 0; i < MaxSteps; i++ {
				r.Steps = append(r.Steps, plan.StepResult{ID: fmt.Sprintf("x%d", i), Pass: true})
			}
		}), 422, "steps: at most"},
		{"a step twice", mutate("s2", func(r *plan.Report) { r.Steps = append(r.Steps, r.Steps[0]) }), 422, "step link given twice"},
		{"step id with a space", mutate("s3", func(r *plan.Report) { r.Steps[0].ID = "my link" }), 422, "step id"},
		{"escape in a summary", mutate("c1", func(r *plan.Report) { r.Steps[0].Summary = "up\x1b[2J\x1b]0;pwned\x07" }), 422, "step link: summary: want"},
		{"newline in a reason", mutate("c2", func(r *plan.Report) { r.Steps[1].Reason = "slow\nstation: report forged" }), 422, "step tcp-up: reason: want"},
		{"control in a type", mutate("c3", func(r *plan.Report) { r.Steps[0].Type = "link\r" }), 422, "step link: type: want"},
		{"C1 control in a port", mutate("c4", func(r *plan.Report) { r.Steps[0].Port = "eth0\u009b" }), 422, "step link: port: want"},
		{"summary too long", mutate("c5", func(r *plan.Report) { r.Steps[0].Summary = strings.Repeat("x", plan.MaxLongText+1) }), 422, "step link: summary: want"},
		{"escape in an attempt", mutate("c6", func(r *plan.Report) {
			r.Steps[1].Attempts = []plan.StepResult{{ID: "tcp-up", Type: "tcp", Summary: "\x1b[31m"}}
		}), 422, "step tcp-up: summary"},
		{"escape in a measurement name", mutate("c7", func(r *plan.Report) { r.Steps[1].Measured["a\x1bb"] = 1 }), 422, "measurement name"},
		{"script in a detail key", mutate("d1", func(r *plan.Report) { r.Steps[0].Detail = json.RawMessage(`{"x\u0000</title><script>":1}`) }), 422, "step link: detail: a key"},
		{"escape in a detail text", mutate("d2", func(r *plan.Report) { r.Steps[0].Detail = json.RawMessage(`{"a":["ok","\u001b[2J"]}`) }), 422, "step link: detail: a text"},
		{"detail too large", mutate("d3", func(r *plan.Report) {
			r.Steps[0].Detail = json.RawMessage(`"` + strings.Repeat("x", MaxDetail) + `"`)
		}), 422, "detail of"},
		{"invalid UTF-8", []byte(strings.Replace(string(report("u1", "zc702", "PASS", 1)), `"zc702"`, "\"zc\xff702\"", 1)), 400, "invalid UTF-8 at byte"},
		{"a key twice", []byte(strings.Replace(string(report("k1", "zc702", "PASS", 1)), `"verdict":"PASS"`, `"verdict":"PASS","verdict":"FAIL"`, 1)), 400, `key "verdict" given twice`},
		{"a key twice, nested", []byte(strings.Replace(string(report("k2", "zc702", "PASS", 1)), `"pass":true`, `"pass":true,"pass":false`, 1)), 400, `key "pass" given twice`},
		{"nested too deep", []byte(strings.Replace(string(report("k3", "zc702", "PASS", 1)), `"pass":true`, `"pass":true,"x":`+strings.Repeat("[", 40)+strings.Repeat("]", 40), 1)), 400, "nested deeper than"},
		{"trailing ]", append(report("t1", "zc702", "PASS", 1), ']'), 400, "data after the JSON document"},
		{"trailing garbage", append(report("t2", "zc702", "PASS", 1), []byte("\n\nxyz")...), 400, "data after the JSON document"},
	} {
		code, msg := post(t, hs.URL, c.body)
		if code != c.code || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %s, want %d %q", c.name, code, msg, c.code, c.want)
		}
	}
	if _, list := get(t, hs.URL+"/api/reports"); strings.TrimSpace(list) != "[]" {
		t.Errorf("refused reports were stored: %s", list)
	}
	// The same key in two objects is fine, and so are a newline and a tab in a detail's
	// text (a tool's output kept whole).
	if code, msg := post(t, hs.URL, mutate("ok2", func(r *plan.Report) {
		r.Steps[0].Detail = json.RawMessage(`{"a":{"pass":1},"b":{"pass":2},"out":"line 1\n\tline 2"}`)
	})); code != 201 {
		t.Errorf("a detail with the same key in two objects: %d %s", code, msg)
	}
	// Trailing white space is fine.
	if code, msg := post(t, hs.URL, append(report("w1", "zc702", "PASS", 1), []byte(" \n")...)); code != 201 {
		t.Errorf("trailing white space: %d %s", code, msg)
	}
}

func postAs(t *testing.T, url, token string, body []byte) (int, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/api/reports", strings.NewReader(string(body)))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// TestTokens: with tokens, POST needs one (401 otherwise, nothing stored), the report
// records the token's name and the remote address; with read tokens, reads need one too.
func TestTokens(t *testing.T) {
	const good, other = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	w, err := ParseTokens([]byte("# the line's fixtures\n"+good+" fixture-1\n\n"+other+" fixture-2\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newServer(t, t.TempDir())
	defer hs.Close()
	srv := hs.Config.Handler.(*Server)
	srv.RequireTokens(w, nil)
	for _, tok := range []string{"", "wrong-token-wrong-token", good + "x", good[:31]} {
		if code, h := postAs(t, hs.URL, tok, report("r1", "zc702", "PASS", 1)); code != 401 || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("token %q: %d", tok, code)
		}
	}
	if code, _ := postAs(t, hs.URL, other, report("r1", "zc702", "PASS", 1)); code != 201 {
		t.Fatalf("a good token: %d", code)
	}
	_, list := get(t, hs.URL+"/api/reports")
	var sums []Summary
	json.Unmarshal([]byte(list), &sums)
	if len(sums) != 1 || sums[0].PostedBy != "fixture-2" || !strings.HasPrefix(sums[0].Remote, "127.0.0.1:") {
		t.Errorf("list: %s", list)
	}
	r, _ := ParseTokens([]byte("aaaaaaaaaaaaaaaaaaaa lead\n"), "read")
	srv.RequireTokens(w, r)
	if code, _ := get(t, hs.URL+"/api/reports"); code != 401 {
		t.Errorf("a read without a token: %d", code)
	}
	for _, tok := range []string{"aaaaaaaaaaaaaaaaaaaa", good} {
		req, _ := http.NewRequest("GET", hs.URL+"/api/reports/r1", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("a read with token %.4s...: %v %v", tok, err, resp)
		}
		resp.Body.Close()
	}
}

func TestParseTokens(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "no tokens"},
		{"# only a comment\n", "no tokens"},
		{"0123456789abcdef0123\n", "tokens:1: want TOKEN NAME"},
		{"short name\n", "the token is 5 characters"},
		{"0123456789abcdef0123 a/b\n", `name "a/b"`},
		{"0123456789abcdef0123 a\n0123456789abcdef0123 b\n", "tokens:2: the token of line 1 again"},
	} {
		if _, err := ParseTokens([]byte(c.in), "tokens"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// TestMetricsBounded: step ids and boards come from the reports; past MaxLabels of each
// the metrics count them as "other", so /metrics stays small whatever is posted.
func TestMetricsBounded(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	defer hs.Close()
	for i := 0; i < 3; i++ {
		body := mutate(fmt.Sprintf("m%d", i), func(r *plan.Report) {
			r.Board = fmt.Sprintf("board%d", i)
			for j := 0; j < MaxSteps-2; j++ {
				r.Steps = append(r.Steps, plan.StepResult{ID: fmt.Sprintf("s%d-%d", i, j), Pass: true})
			}
		})
		if code, msg := post(t, hs.URL, body); code != 201 {
			t.Fatalf("post: %d %s", code, msg)
		}
	}
	_, m := get(t, hs.URL+"/metrics")
	if n := strings.Count(m, "linerate_step_results_total{"); n > MaxLabels*2+4 || !strings.Contains(m, `step="other"`) || len(m) > 200_000 {
		t.Errorf("%d step series, %d bytes of metrics", n, len(m))
	}
}

// TestBackfill: a store written before summary records gets them when a station opens
// it, and lists every report as before.
func TestBackfill(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"o1", "o2"} {
		var r plan.Report
		body := report(id, "zc702", "PASS", 900)
		json.Unmarshal(body, &r)
		if _, err := st.Put(&r, body, time.Now(), Meta{}, Rules{}); err != nil {
			t.Fatal(err)
		}
	}
	st.db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketSums) })
	st.Close()
	st, hs := newServer(t, dir)
	defer hs.Close()
	defer st.Close()
	list, _ := st.List()
	if len(list) != 2 || list[0].ID != "o1" || list[1].Figures["tcp-up_mbps"] != 900 {
		t.Errorf("list after the backfill: %+v", list)
	}
	if _, m := get(t, hs.URL+"/metrics"); !strings.Contains(m, `linerate_boards_tested_total{board="zc702",verdict="PASS"} 2`) {
		t.Errorf("metrics after the backfill:\n%s", m)
	}
}

// BenchmarkPage10k: the page with 10,000 reports in the store (each with a 20 KB show, as
// a board's report has) reads the summary records only; whole-reports is what parsing
// every report, as the page did before, costs on the same store.
func BenchmarkPage10k(b *testing.B) {
	dir := b.TempDir()
	st, err := OpenBolt(dir)
	if err != nil {
		b.Fatal(err)
	}
	st.db.NoSync = true
	show := json.RawMessage(`"` + strings.Repeat("x", 20000) + `"`)
	for i := 0; i < 10000; i++ {
		var r plan.Report
		json.Unmarshal(report(fmt.Sprintf("r%05d", i), []string{"zc702", "zcu102"}[i%2], "PASS", 900), &r)
		r.Show = show
		body, _ := json.Marshal(r)
		if _, err := st.Put(&r, body, time.Now(), Meta{}, Rules{}); err != nil {
			b.Fatal(err)
		}
	}
	st.Close()
	st, hs := newServer(b, dir)
	defer hs.Close()
	defer st.Close()
	b.Run("page", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			resp, err := http.Get(hs.URL + "/?board=zc702")
			if err != nil || resp.StatusCode != 200 {
				b.Fatal(err, resp)
			}
			resp.Body.Close()
		}
	})
	// 30 operators loading the page at once (before the index: 12-16 s each and
	// 950 MB); ns/op is the time until the last of them has its page.
	b.Run("30-at-once", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var wg sync.WaitGroup
			errs := make(chan error, 30)
			for j := 0; j < 30; j++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := http.Get(hs.URL + "/")
					if err == nil {
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	// What the page cost before the summary records: every whole report parsed.
	b.Run("whole-reports", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			st.db.View(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketReports).ForEach(func(_, v []byte) error {
					var r plan.Report
					return json.Unmarshal(v, &r)
				})
			})
		}
	})
}

// TestBoardsTestedOncePerSerial: a board retested counts once among the boards tested
// (with its first verdict) and every time among the reports.
func TestBoardsTestedOncePerSerial(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	defer hs.Close()
	post(t, hs.URL, mutate("x1", func(r *plan.Report) {
		r.Serial, r.Verdict, r.Failed, r.Steps[1].Pass = "SN-X", "FAIL", []string{"tcp-up"}, false
	}))
	post(t, hs.URL, mutate("x2", func(r *plan.Report) { r.Serial = "SN-X" }))
	_, m := get(t, hs.URL+"/metrics")
	for _, want := range []string{`linerate_boards_tested_total{board="zc702",verdict="FAIL"} 1`, `linerate_reports_total{board="zc702",verdict="FAIL"} 1`,
		`linerate_reports_total{board="zc702",verdict="PASS"} 1`, `linerate_throughput_bytes_per_second_sum{board="zc702",step="tcp-up"} 2.25e+08`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(m, `linerate_boards_tested_total{board="zc702",verdict="PASS"}`) {
		t.Error("the retest counted as a second board")
	}
}
