package station

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMetricsPromtool: /metrics of a station with reports, a duplicate MAC, an alarm
// and a board in test passes Debian's promtool check metrics (names, units, types).
func TestMetricsPromtool(t *testing.T) {
	if _, err := exec.LookPath("promtool"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed: make test installs it (Debian's prometheus)")
		}
		t.Skip("no promtool")
	}
	_, hs := newServer(t, t.TempDir())
	defer hs.Close()
	for i, r := range [][]byte{boardReport("m1", "A", "00:0a:35:00:00:01", "f1", "FAIL", "tcp-up"), boardReport("m2", "B", "00:0a:35:00:00:01", "f1", "FAIL", "tcp-up"),
		boardReport("m3", "C", "00:0a:35:00:00:03", "f1", "FAIL", "tcp-up"), report("m4", "zcu102", "PASS", 941)} {
		if code, msg := post(t, hs.URL, r); code != http.StatusCreated {
			t.Fatalf("POST %d: %d %s", i, code, msg)
		}
	}
	resp, err := http.Post(hs.URL+"/api/live", "application/json", strings.NewReader(`{"id":"m5","board":"zc702","serial":"E","event":"start","budget_s":60,"steps":3}`))
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("live: %v %v", err, resp)
	}
	resp.Body.Close()
	code, m := get(t, hs.URL+"/metrics")
	if code != 200 || !strings.Contains(m, "linerate_alarms 1") || !strings.Contains(m, "linerate_throughput_bytes_per_second_bucket") || !strings.Contains(m, `linerate_boards_in_test{state="testing"} 1`) {
		t.Fatalf("metrics %d:\n%s", code, m)
	}
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = strings.NewReader(m)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}
