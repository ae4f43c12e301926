package station

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// alarmStation is a station without tokens whose fixture fx1 has an open alarm (three
// boards failing tcp-up on it); it gives the alarm's id.
func alarmStation(t *testing.T) (*Server, string, string) {
	_, hs := newServer(t, t.TempDir())
	t.Cleanup(hs.Close)
	for i, serial := range []string{"A", "B", "C"} {
		if code, msg := post(t, hs.URL, boardReport("cs"+serial, serial, "00:0a:35:00:00:1"+string(rune('0'+i)), "fx1", "FAIL", "tcp-up")); code != 201 {
			t.Fatalf("post: %d %s", code, msg)
		}
	}
	var alarms []Alarm
	_, body := get(t, hs.URL+"/api/alarms")
	if json.Unmarshal([]byte(body), &alarms); len(alarms) != 1 {
		t.Fatalf("alarms: %s", body)
	}
	return hs.Config.Handler.(*Server), hs.URL, alarms[0].ID
}

func do(t *testing.T, method, u string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	return resp.StatusCode, b.String()
}

// TestWritesCrossSite: a write a browser marks cross-site (Origin, Sec-Fetch-Site) is
// refused (403), a report or live event declared as text or a form is refused (415), a
// browser's acknowledgement needs the page's form token of its session; nothing is
// stored, the alarm stays open; the page's own form, and a script, still acknowledge.
func TestWritesCrossSite(t *testing.T) {
	_, base, alarm := alarmStation(t)
	host := strings.TrimPrefix(base, "http://")
	rep := string(boardReport("cs-evil", "EVIL", "00:0a:35:00:00:99", "fx1", "PASS", ""))
	live := `{"id":"cs-live","event":"start"}`
	ack := base + "/api/alarms/" + alarm + "/ack"
	for _, c := range []struct {
		name, path string
		hdr        map[string]string
		body       string
		want       int
	}{
		{"report from another origin", "/api/reports", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}, rep, 403},
		{"report, origin null", "/api/reports", map[string]string{"Origin": "null"}, rep, 403},
		{"report, cross-site fetch", "/api/reports", map[string]string{"Sec-Fetch-Site": "cross-site"}, rep, 403},
		{"report, same-site fetch", "/api/reports", map[string]string{"Sec-Fetch-Site": "same-site"}, rep, 403},
		{"report as text/plain", "/api/reports", map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, rep, 415},
		{"report as a form", "/api/reports", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, rep, 415},
		{"report as multipart", "/api/reports", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, rep, 415},
		{"live as text/plain", "/api/live", map[string]string{"Content-Type": "text/plain"}, live, 415},
		{"live from another origin", "/api/live", map[string]string{"Origin": "http://evil.example"}, live, 403},
		{"ack from another origin", "/api/alarms/" + alarm + "/ack", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, "", 403},
		{"ack, cross-site fetch", "/api/alarms/" + alarm + "/ack", map[string]string{"Sec-Fetch-Site": "cross-site"}, "", 403},
		{"ack from the page without its token", "/api/alarms/" + alarm + "/ack", map[string]string{"Origin": base, "Content-Type": "application/x-www-form-urlencoded"}, "", 403},
		{"ack with another session's token", "/api/alarms/" + alarm + "/ack", map[string]string{"Origin": base, "Cookie": sessionCookie + "=00000000000000000000000000000000", "Content-Type": "application/x-www-form-urlencoded"}, "csrf=abc", 403},
		{"ack from a host name not the station's", "/api/alarms/" + alarm + "/ack", map[string]string{"Origin": "http://" + host + ".evil.example"}, "", 403},
	} {
		if code, msg := do(t, "POST", base+c.path, c.hdr, c.body); code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, msg, c.want)
		}
	}
	var list []Summary
	_, body := get(t, base+"/api/reports")
	if json.Unmarshal([]byte(body), &list); len(list) != 3 {
		t.Errorf("%d reports stored, want the 3 before", len(list))
	}
	if _, l := get(t, base+"/api/live"); strings.Contains(l, "cs-live") {
		t.Errorf("a refused live event is listed: %s", l)
	}
	if _, a := get(t, base+"/api/alarms"); !strings.Contains(a, alarm) {
		t.Fatalf("the alarm was acknowledged by a refused request")
	}
	_, m := get(t, base+"/metrics")
	for _, want := range []string{`linerate_reports_refused_total{reason="cross-site"} 4`, `linerate_reports_refused_total{reason="not-json"} 3`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// The page's own form: its session cookie and form token.
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	buf := make([]byte, 1<<16)
	for {
		n, err := resp.Body.Read(buf)
		page.Write(buf[:n])
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			cookie = c
		}
	}
	m2 := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page.String())
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || m2 == nil {
		t.Fatalf("the page gives no session cookie (HttpOnly, SameSite=Strict) or no form token: %+v %v", cookie, m2)
	}
	form := url.Values{"csrf": {m2[1]}}.Encode()
	code, msg := do(t, "POST", ack, map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin", "Cookie": cookie.Name + "=" + cookie.Value, "Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"}, form)
	if code != http.StatusSeeOther {
		t.Errorf("the page's own acknowledgement: %d %s", code, msg)
	}
	if _, a := get(t, base+"/api/alarms"); strings.Contains(a, alarm) {
		t.Errorf("the page's acknowledgement did not take: %s", a)
	}
}

// TestScriptAcknowledges: a script (no Origin, no cookie) acknowledges on a station
// without tokens as before.
func TestScriptAcknowledges(t *testing.T) {
	_, base, alarm := alarmStation(t)
	if code, msg := do(t, "POST", base+"/api/alarms/"+alarm+"/ack", nil, ""); code != 200 {
		t.Errorf("a script's acknowledgement: %d %s", code, msg)
	}
}

// TestReadTokensRefuseAnonymousWrites: a station given only --read-tokens refuses every
// anonymous write (a report, a live event, an acknowledgement) and takes one with a
// read token.
func TestReadTokensRefuseAnonymousWrites(t *testing.T) {
	srv, base, alarm := alarmStation(t)
	r, err := ParseTokens([]byte("aaaaaaaaaaaaaaaaaaaa lead\n"), "read")
	if err != nil {
		t.Fatal(err)
	}
	srv.RequireTokens(nil, r)
	rep := string(boardReport("rt-1", "RT", "00:0a:35:00:00:77", "fx2", "PASS", ""))
	for path, body := range map[string]string{"/api/reports": rep, "/api/live": `{"id":"rt-live","event":"start"}`, "/api/alarms/" + alarm + "/ack": ""} {
		if code, _ := do(t, "POST", base+path, map[string]string{"Content-Type": "application/json"}, body); code != 401 {
			t.Errorf("anonymous POST %s: %d, want 401", path, code)
		}
	}
	if code, msg := do(t, "POST", base+"/api/reports", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer aaaaaaaaaaaaaaaaaaaa"}, rep); code != 201 {
		t.Errorf("a report with a read token: %d %s", code, msg)
	}
}

// TestCrossSiteInChromium: a page of another site (localhost, the station being
// 127.0.0.1), in headless Chromium, posts a report with a no-cors fetch (text/plain) and
// auto-submits the acknowledge form: both reach the station and both are refused;
// nothing is stored and the alarm stays open.
func TestCrossSiteInChromium(t *testing.T) {
	needChromium(t)
	srv, _, alarm := alarmStation(t)
	var mu sync.Mutex
	hits := map[string]int{}
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		srv.ServeHTTP(sw, r)
		if r.Method == "POST" {
			mu.Lock()
			hits[r.URL.Path+" "+strconv.Itoa(sw.code)]++
			mu.Unlock()
		}
	}))
	defer rec.Close()
	station := rec.URL // http://127.0.0.1:PORT
	rep := string(boardReport("cs-chromium", "EVIL", "00:0a:35:00:00:98", "fx1", "PASS", ""))
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><body><form method="post" action="%s/api/alarms/%s/ack"><input name="x" value="1"></form>
<script>fetch(%q, {method: "POST", mode: "no-cors", body: %q}).finally(() => document.forms[0].submit());</script></body></html>`,
			station, alarm, station+"/api/reports", rep)
	}))
	defer evil.Close()
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	cmd := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--virtual-time-budget=5000", "--dump-dom", evilURL)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["/api/reports 403"] != 1 || hits["/api/alarms/"+alarm+"/ack 403"] != 1 || len(hits) != 2 {
		t.Errorf("the station saw %v, want the report and the acknowledgement each refused with 403", hits)
	}
	var list []Summary
	_, body := get(t, station+"/api/reports")
	if json.Unmarshal([]byte(body), &list); len(list) != 3 {
		t.Errorf("%d reports stored, want the 3 before", len(list))
	}
	if _, a := get(t, station+"/api/alarms"); !strings.Contains(a, alarm) {
		t.Errorf("the other site's form acknowledged the alarm")
	}
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = 200
	}
	return s.ResponseWriter.Write(b)
}
