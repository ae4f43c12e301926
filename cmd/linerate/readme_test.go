package main

import (
	"os"
	"strings"
	"testing"
)

// readme is README.md's lines.
func readme(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// TestReadmeShowRootMessage: the message README quotes for 'show --root' of a tree
// without the kernel's answers is what show prints.
func TestReadmeShowRootMessage(t *testing.T) {
	lines := readme(t)
	want := ""
	for i, l := range lines {
		if l == "    $ linerate show --root /tmp/board" && i+1 < len(lines) {
			want = strings.TrimPrefix(lines[i+1], "    ")
		}
	}
	if want == "" {
		t.Fatal("README quotes no 'linerate show --root /tmp/board'")
	}
	dir := t.TempDir()
	_, stderr, code := runCLI(t, "show", "--root", dir)
	got := strings.ReplaceAll(strings.SplitN(stderr, "\n", 2)[0], dir, "/tmp/board")
	if code != 2 || got != want {
		t.Errorf("show --root prints\n%s\nREADME says\n%s", got, want)
	}
}

// TestReadmeDoctorExcerpt: the doctor excerpt README shows is the golden output's start,
// line for line (and the golden file is what doctor prints: TestGolden).
func TestReadmeDoctorExcerpt(t *testing.T) {
	lines := readme(t)
	var excerpt []string
	for i, l := range lines {
		if strings.HasPrefix(l, "What a GEM on a ZC702 typically shows (from `testdata/show/golden/doctor-zynq7000-gem.txt`)") {
			for _, e := range lines[i+2:] {
				if !strings.HasPrefix(e, "    ") || strings.TrimSpace(e) == "..." {
					break
				}
				excerpt = append(excerpt, strings.TrimPrefix(e, "    "))
			}
		}
	}
	golden, err := os.ReadFile("../../testdata/show/golden/doctor-zynq7000-gem.txt")
	if err != nil {
		t.Fatal(err)
	}
	g := strings.Split(string(golden), "\n")
	if len(excerpt) < 3 || len(excerpt) > len(g) {
		t.Fatalf("README's doctor excerpt: %d lines", len(excerpt))
	}
	for i, l := range excerpt {
		if l != g[i] {
			t.Errorf("README line %d of the doctor excerpt:\n%s\nthe golden output has\n%s", i+1, l, g[i])
		}
	}
}
