package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTraceInNamespaces: a board's report says what produced it (the plan's hash, the
// image's build from its build file, the running kernel, the operator), the station adds
// its version and filters by each; a board passing inside a marginal band passes as
// marginal; a station given the line's plans refuses a report of another plan, and the
// board's run fails saying so.
func TestTraceInNamespaces(t *testing.T) {
	b, st := boardPair(t)
	// The image's build file, where 'ip netns exec' puts a namespace's own /etc: it binds
	// /etc/netns/NAME/linerate over /etc/linerate, which must be there (made empty for
	// the test when this machine has none).
	etc := filepath.Join("/etc/netns", b.Name, "linerate")
	os.MkdirAll(etc, 0o755)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(etc)) })
	if _, err := os.Stat("/etc/linerate"); os.IsNotExist(err) {
		if err := os.Mkdir("/etc/linerate", 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove("/etc/linerate") })
	}
	os.WriteFile(filepath.Join(etc, "build.json"), []byte(`{"id":"feedc0ffee123456","linerate":"v9.9","board":"zc702","image_sha256":"ab","kernel":"6.1.192","kernel_config_sha256":"cd"}`), 0o644)
	text := "name: traced\nboard: zc702\ninterface: eth0\nbudget: 1m\nstation:\n  address: 198.18.61.1\n  report_url: http://198.18.61.1:8080/api/reports\nsteps:\n" +
		"  - {id: link, type: link, carrier_within: 5s}\n  - {id: tcp-up, type: iperf3, duration: 2s, min_mbps: 1, marginal_mbps: 1000000}\n"
	plans := t.TempDir()
	os.WriteFile(filepath.Join(plans, "traced.yaml"), []byte(text), 0o644)
	srv, _, errOut := linerateIn(t, st, "station", "--listen", "198.18.61.1:8080", "--data", t.TempDir(), "--iperf3", "198.18.61.1:5201",
		"--plans", plans, "--plan-policy", "reject", "--duration", "120s")
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		waitOrKill(srv, 20*time.Second)
		if t.Failed() {
			t.Logf("station:\n%s", errOut)
		}
	})
	waitListen(st, "8080")
	waitListen(st, "5201")
	get := func(path string) string {
		resp, err := nsClient(st).Get("http://198.18.61.1:8080" + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return string(out)
	}
	out, code := runIn(t, b, time.Minute, "validate", writePlan(t, text), "--serial", "T1", "--operator", "ann", "--report-dir", t.TempDir())
	if code != 0 || !regexp.MustCompile(`(?m)^LINERATE PASS marginal=tcp-up_mbps board=zc702 serial=T1 `).MatchString(out) ||
		!strings.Contains(out, "image build feedc0ffee123456 (linerate v9.9, kernel 6.1.192)") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	id := regexp.MustCompile(`report (\S+) delivered`).FindStringSubmatch(out)[1]
	var rep struct {
		PlanSHA256 string `json:"plan_sha256"`
		Build      struct{ ID string }
		Kernel     string
		Operator   string
		Linerate   string   `json:"linerate_version"`
		Station    string   `json:"station_version"`
		Marginal   []string `json:"marginal"`
		Steps      []struct {
			ID     string
			Limits []struct{ Status string }
		}
	}
	if err := json.Unmarshal([]byte(get("/api/reports/"+id)), &rep); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(text))
	uname := strings.TrimSpace(b.Exec(t, "uname", "-r"))
	if rep.PlanSHA256 != hex.EncodeToString(sum[:]) || rep.Build.ID != "feedc0ffee123456" || rep.Kernel != uname || rep.Operator != "ann" || rep.Station == "" ||
		rep.Linerate == "" || strings.Join(rep.Marginal, ",") != "tcp-up_mbps" || len(rep.Steps) != 2 || len(rep.Steps[1].Limits) != 1 || rep.Steps[1].Limits[0].Status != "marginal" {
		t.Errorf("the stored report: %+v", rep)
	}
	for q, n := range map[string]int{"operator=ann": 1, "operator=bob": 0, "build=feedc0ffee123456": 1, "plan=" + rep.PlanSHA256[:12]: 1, "kernel=" + uname: 1, "uboot=2023.01": 0} {
		var list []struct{ ID string }
		if err := json.Unmarshal([]byte(get("/api/reports?"+q)), &list); err != nil || len(list) != n {
			t.Errorf("/api/reports?%s: %d reports (%v), want %d", q, len(list), err, n)
		}
	}
	if page := get("/reports/" + id); !strings.Contains(page, "feedc0ffee123456") || !strings.Contains(page, "ann") || !strings.Contains(page, rep.PlanSHA256) {
		t.Errorf("the report's page does not say what produced it")
	}
	// A plan the line does not run: the station refuses the report, the run fails.
	other := strings.Replace(text, "name: traced", "name: edited-on-the-bench", 1)
	out, code = runIn(t, b, time.Minute, "validate", writePlan(t, other), "--serial", "T2", "--operator", "ann", "--report-dir", t.TempDir(), "--upload-window", "3s")
	if code != 1 || !strings.Contains(out, "is not one of the station's plans (traced.yaml)") || !regexp.MustCompile(`(?m)^LINERATE FAIL .*failed=station-refused `).MatchString(out) {
		t.Errorf("an unknown plan: exit %d\n%s", code, out)
	}
}
