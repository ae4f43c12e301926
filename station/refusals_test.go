package station

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedLog is a log the server writes while the test reads it.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const refusalToken = "0123456789abcdef0123456789abcdef"

func refusingServer(t *testing.T) (*Server, *httptest.Server, *lockedLog) {
	t.Helper()
	st, err := OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logged lockedLog
	srv, err := NewServer(st, log.New(&logged, "", 0), Options{MACPolicy: MACReject, Version: "v-test"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ParseTokens([]byte(refusalToken+" line-3\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	srv.RequireTokens(tok, nil)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs, &logged
}

func postWith(t *testing.T, url, token string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/api/reports", bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestRefusalsCountedAndLogged: every kind of refused report is counted by its reason
// in linerate_reports_refused_total and logged once, with the token's name and the
// board's serial where the body had one; /metrics has the Go and process collectors
// and linerate_build_info.
func TestRefusalsCountedAndLogged(t *testing.T) {
	_, hs, logged := refusingServer(t)
	bad := report("r-bad", "zc702", "PASS", 900)
	bad = bytes.Replace(bad, []byte(`"verdict":"PASS"`), []byte(`"verdict":"MAYBE"`), 1)
	for _, c := range []struct {
		reason string
		code   int
		post   func() int
		line   string // what its log line must hold
	}{
		{"no-token", 401, func() int { return postWith(t, hs.URL, "", report("r1", "zc702", "PASS", 900)) }, "refused (no-token): no valid write token"},
		{"malformed", 400, func() int { return postWith(t, hs.URL, refusalToken, []byte(`{"serial":"SN-garbled","steps":"x"`)) }, "line-3 (127.0.0.1:"},
		{"malformed", 400, func() int { return postWith(t, hs.URL, refusalToken, []byte(`{"id":"r0","serial":"SN-cut","steps":[`)) }, "serial SN-cut, refused (malformed)"},
		{"invalid", 422, func() int { return postWith(t, hs.URL, refusalToken, bad) }, "serial SN-r-bad, refused (invalid)"},
		{"too-large", 413, func() int {
			return postWith(t, hs.URL, refusalToken, append([]byte(`{"serial":"SN-big","x":"`), bytes.Repeat([]byte("a"), MaxReportBytes)...))
		}, "serial SN-big, refused (too-large)"},
		{"unreadable", 0, func() int {
			// A board gone mid-post: the length promised, a part of it sent.
			c, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "POST /api/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\n\r\n{\"serial\":", refusalToken)
			c.(*net.TCPConn).CloseWrite()
			io.Copy(io.Discard, c)
			c.Close()
			return 0
		}, "refused (unreadable)"},
		{"id-conflict", 409, func() int {
			if code := postWith(t, hs.URL, refusalToken, boardReport("r2", "SN-2", "00:0a:35:00:00:02", "f1", "PASS", "")); code != 201 {
				t.Fatalf("first post: %d", code)
			}
			return postWith(t, hs.URL, refusalToken, boardReport("r2", "SN-2b", "00:0a:35:00:00:09", "f1", "PASS", ""))
		}, "report r2 from line-3"},
		{"duplicate-mac", 409, func() int {
			return postWith(t, hs.URL, refusalToken, boardReport("r3", "SN-3", "00:0a:35:00:00:02", "f1", "PASS", ""))
		}, "serial SN-3, refused (duplicate-mac)"},
	} {
		before := strings.Count(logged.String(), "refused ("+c.reason+")")
		if code := c.post(); code != c.code {
			t.Errorf("%s: HTTP %d, want %d", c.reason, code, c.code)
		}
		var line string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if strings.Count(logged.String(), "refused ("+c.reason+")") == before+1 {
				for _, l := range strings.Split(logged.String(), "\n") {
					if strings.Contains(l, "refused ("+c.reason+")") {
						line = l
					}
				}
				break
			}
		}
		if !strings.Contains(line, c.line) {
			t.Errorf("%s: log line %q, want it to hold %q; log:\n%s", c.reason, line, c.line, logged.String())
		}
	}
	resp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(m), `linerate_reports_refused_total{reason="malformed"} 2`) {
		t.Errorf("/metrics does not count two malformed refusals")
	}
	for _, reason := range []string{"no-token", "invalid", "too-large", "unreadable", "id-conflict", "duplicate-mac"} {
		if !strings.Contains(string(m), `linerate_reports_refused_total{reason="`+reason+`"} 1`) {
			t.Errorf("/metrics does not count one %s refusal", reason)
		}
	}
	for _, want := range []string{"go_goroutines ", "go_memstats_alloc_bytes ", "process_resident_memory_bytes ", "process_open_fds ",
		`linerate_build_info{goversion="go`} {
		if !strings.Contains(string(m), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !regexp.MustCompile(`linerate_build_info\{goversion="go[^"]+",version="v-test"\} 1`).Match(m) {
		t.Errorf("build info:\n%s", regexp.MustCompile(`(?m)^linerate_build_info.*$`).Find(m))
	}
}

// TestRefusalLogRateLimited: a board posting bad reports in a loop gets refusalBurst
// log lines a minute, every refusal counted; the next minute's first line says how
// many were left out.
func TestRefusalLogRateLimited(t *testing.T) {
	srv, hs, logged := refusingServer(t)
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	srv.refused.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	for i := 0; i < refusalBurst+15; i++ {
		postWith(t, hs.URL, refusalToken, []byte("not json"))
	}
	if n := strings.Count(logged.String(), "refused (malformed)"); n != refusalBurst {
		t.Errorf("%d lines for %d refusals in a minute, want %d", n, refusalBurst+15, refusalBurst)
	}
	mu.Lock()
	now = now.Add(refusalWindow)
	mu.Unlock()
	postWith(t, hs.URL, refusalToken, []byte("not json"))
	if !strings.Contains(logged.String(), "15 refusal lines left out in the minute before") || strings.Count(logged.String(), "refused (malformed)") != refusalBurst+1 {
		t.Errorf("after the minute:\n%s", logged.String())
	}
	resp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf(`linerate_reports_refused_total{reason="malformed"} %d`, refusalBurst+16); !strings.Contains(string(m), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// FuzzSerialOf: whatever a refused body holds, serialOf neither panics nor gives more
// than the bound, nor a control character for the log.
func FuzzSerialOf(f *testing.F) {
	for _, s := range []string{`{"serial":"SN-1"}`, `{"id":"x","serial":"SN-cut","steps":[`, `{"a":{"serial":"inner"},"serial":"outer"}`, `[1,2]`, `{"serial":7}`, "{\"serial\":\"\\u001b[2J\"}", `{"serial":"a\nb"}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s := serialOf(body)
		if len(s) > 4*64+3 || strings.ContainsAny(s, "\x1b\r\n") {
			t.Fatalf("serialOf(%q) = %q", body, s)
		}
	})
}
