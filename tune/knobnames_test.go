package tune

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// isKnobName says a string is a knob's name as the registry knows it: a profile key
// (rings.rx, sysctl.net.core.rmem_max), a concrete knob (queue.rx-0.rps_cpus,
// feature.rx-gro), or the prefix a family builds names from (queue., sysctl.).
func isKnobName(s string) bool {
	if !strings.Contains(s, ".") || strings.ContainsAny(s, " \t\n/") {
		return false
	}
	if _, ok := rowOf(s); ok {
		return true
	}
	if _, _, ok := concreteRow(s); ok {
		return true
	}
	// The prefixes names are built from: a key that takes a suffix, a concrete name with
	// a number or a name in it.
	for _, r := range rows {
		for _, name := range []string{r.key, r.concrete} {
			if !strings.HasSuffix(name, ".") && !strings.ContainsAny(name, "*#") {
				continue
			}
			if pre, _, ok := strings.Cut(name, "."); ok && s == pre+"." {
				return true
			}
		}
	}
	return false
}

// bareKeys are the profile keys without a dot (mtu, promisc): a word other code uses too
// (a JSON key, a label), so only a comparison with one counts.
func bareKeys() map[string]bool {
	out := map[string]bool{}
	for _, r := range rows {
		if !strings.Contains(r.key, ".") {
			out[r.key] = true
		}
	}
	return out
}

// knobLiterals are the places in src where a knob's name is written as a string: any
// literal that is a dotted knob name, and a bare key compared (== != or a case).
func knobLiterals(fset *token.FileSet, f *ast.File) []string {
	tags := map[*ast.BasicLit]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if fl, ok := n.(*ast.Field); ok && fl.Tag != nil {
			tags[fl.Tag] = true
		}
		return true
	})
	bare := bareKeys()
	lit := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING || tags[b] {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	var out []string
	say := func(n ast.Node, s string) { out = append(out, fset.Position(n.Pos()).String()+": "+strconv.Quote(s)) }
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if s, ok := lit(n); ok && isKnobName(s) {
				say(n, s)
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				for _, e := range []ast.Expr{n.X, n.Y} {
					if s, ok := lit(e); ok && bare[s] {
						say(e, s)
					}
				}
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if s, ok := lit(e); ok && bare[s] {
					say(e, s)
				}
			}
		}
		return true
	})
	return out
}

// TestKnobNamesStayInFamilies: outside tune's family files (and tests), no code writes a
// knob's name: it asks the registry (Info, RingKnob, KnobPHYControl, ...), so a knob is
// renamed, added or dropped in one place. The check of a dependency check's kind, over
// the whole tree.
func TestKnobNamesStayInFamilies(t *testing.T) {
	// The check finds what it is for.
	fset := token.NewFileSet()
	probe, err := parser.ParseFile(fset, "probe.go", `package p
type T struct{ MTU int `+"`json:\"mtu\"`"+` }
var a = map[string]int{"mtu": 1}
func f(k string) bool {
	switch k {
	case "promisc":
	}
	return k == "rings.rx" || k == "mtu" || k+"x" == "sysctl." || k == "queue.rx-0.rps_cpus" || k == "rings.rx is a knob"
}`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(knobLiterals(fset, probe), " "); got != `probe.go:6:7: "promisc" probe.go:8:14: "rings.rx" probe.go:8:33: "mtu" probe.go:8:51: "sysctl." probe.go:8:69: "queue.rx-0.rps_cpus"` {
		t.Fatalf("the check found %s", got)
	}
	var found []string
	err = filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "out", "bin", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		rel := filepath.ToSlash(p)
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, "../tune/family_") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		found = append(found, knobLiterals(fset, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("a knob's name outside tune's family files (ask the registry): %s", f)
	}
}

// Info is what autotune, the DT import and the sweep ask of a knob.
func TestInfo(t *testing.T) {
	for key, bounces := range map[string]bool{RingKnob(true): true, RingKnob(false): true, "mtu": true, "channels.combined": true,
		"coalesce.usecs": false, "sysctl.net.core.rmem_max": false, "features.gro": false, "rps.cpus": false} {
		i, err := Info(key)
		if err != nil || i.Bounces != bounces {
			t.Errorf("%s: %+v %v, want bounces %v", key, i, err, bounces)
		}
	}
	for _, key := range []string{KnobPHYControl, KnobAdvertise, "rings.nonsense", "sysctl.kernel.panic"} {
		if _, err := Info(key); err == nil || !strings.Contains(err.Error(), "unknown knob") {
			t.Errorf("%s: %v, want unknown", key, err)
		}
	}
	if rx, ok := IsRingKnob(RingKnob(false)); rx || !ok {
		t.Error("the TX ring's knob")
	}
	if _, ok := IsRingKnob("mtu"); ok {
		t.Error("mtu is no ring")
	}
}
