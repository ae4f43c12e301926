package main

import (
	"os"
	"strings"
	"testing"
)

// readme is README.md's lines.
func readme(t *testing.T) []string { return docLines(t, "../../README.md") }

// docLines are a page's lines.
func docLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// TestReadmeShowRootMessage: the message docs/diagnose.md quotes for 'show --root' of a
// tree without the kernel's answers is what show prints.
func TestReadmeShowRootMessage(t *testing.T) {
	lines := docLines(t, "../../docs/diagnose.md")
	want := ""
	for i, l := range lines {
		if l == "    $ linerate show --root /tmp/board" && i+1 < len(lines) {
			want = strings.TrimPrefix(lines[i+1], "    ")
		}
	}
	if want == "" {
		t.Fatal("docs/diagnose.md quotes no 'linerate show --root /tmp/board'")
	}
	dir := t.TempDir()
	_, stderr, code := runCLI(t, "show", "--root", dir)
	got := strings.ReplaceAll(strings.SplitN(stderr, "\n", 2)[0], dir, "/tmp/board")
	if code != 2 || got != want {
		t.Errorf("show --root prints\n%s\ndocs/diagnose.md says\n%s", got, want)
	}
}

// TestReadmeDoctorExcerpt: the doctor excerpt docs/diagnose.md shows is the golden
// output's start, line for line (and the golden file is what doctor prints: TestGolden).
func TestReadmeDoctorExcerpt(t *testing.T) {
	lines := docLines(t, "../../docs/diagnose.md")
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
		t.Fatalf("docs/diagnose.md's doctor excerpt: %d lines", len(excerpt))
	}
	for i, l := range excerpt {
		if l != g[i] {
			t.Errorf("docs/diagnose.md line %d of the doctor excerpt:\n%s\nthe golden output has\n%s", i+1, l, g[i])
		}
	}
}
