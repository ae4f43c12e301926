package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "j.json")
	for _, s := range []string{"one", "two"} {
		if err := Write(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != s {
			t.Errorf("content %q, want %q", b, s)
		}
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	if err := Write(filepath.Join(t.TempDir(), "no/such/dir/f"), nil, 0o644); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}
