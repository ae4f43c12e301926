package main

import (
	"os"
	"strings"
	"testing"
)

// TestGeneratedDocsFresh: docs/plans.md is what 'linerate help plan --markdown' writes
// from the step kinds today; a field added, renamed or described anew without 'make
// docs' fails here.
func TestGeneratedDocsFresh(t *testing.T) {
	want, _, code := runCLI(t, "help", "plan", "--markdown")
	if code != 0 {
		t.Fatalf("help plan --markdown: exit %d", code)
	}
	got, err := os.ReadFile("../../docs/plans.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("docs/plans.md is out of date: run 'make docs' and commit it")
	}
	text, _, code := runCLI(t, "help", "plan")
	if code != 0 || !strings.Contains(text, "STEP TYPE iperf3") || !strings.Contains(text, "  min_mbps: number") {
		t.Errorf("help plan: exit %d\n%s", code, text)
	}
	for i, l := range strings.Split(text, "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("help plan line %d over 80 columns: %q", i+1, l)
		}
	}
}

// TestFrontDoor: README.md stays a front door (at most 400 lines), and every page of
// docs/ it sends a reader to is there.
func TestFrontDoor(t *testing.T) {
	lines := readme(t)
	if len(lines) > 400 {
		t.Errorf("README.md is %d lines: the reference belongs in docs/", len(lines))
	}
	text := strings.Join(lines, "\n")
	for _, l := range strings.Split(text, "](docs/")[1:] {
		page, _, _ := strings.Cut(l, ")")
		page, _, _ = strings.Cut(page, "#")
		if _, err := os.Stat("../../docs/" + page); err != nil {
			t.Errorf("README links docs/%s: %v", page, err)
		}
	}
}

// TestStationLimitsCLI: 'station limits' reads a store (an empty one here: nothing to
// propose) and its usage errors name the flag.
func TestStationLimitsCLI(t *testing.T) {
	out, _, code := runCLI(t, "station", "limits", "--data", t.TempDir(), "--type", "zc702")
	if code != 0 || !strings.Contains(out, "no measurement with a limit in the stored passing reports") {
		t.Errorf("exit %d: %s", code, out)
	}
	out, _, code = runCLI(t, "station", "limits", "--data", t.TempDir(), "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("--json: exit %d: %s", code, out)
	}
	if _, errOut, code := runCLI(t, "station", "--population", "5"); code != 2 || !strings.Contains(errOut, "--population 5 --sigmas 6: want 30..1000000 boards") {
		t.Errorf("a small population: exit %d: %s", code, errOut)
	}
}
