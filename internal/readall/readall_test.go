package readall

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLimitAndFile(t *testing.T) {
	if b, err := Limit(strings.NewReader("abc"), 3); err != nil || string(b) != "abc" {
		t.Errorf("at the bound: %q %v", b, err)
	}
	var tl *TooLarge
	if _, err := Limit(strings.NewReader("abcd"), 3); !errors.As(err, &tl) || tl.Max != 3 {
		t.Errorf("over the bound: %v", err)
	}
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("hello"), 0o644)
	if b, err := File(p, 10); err != nil || string(b) != "hello" {
		t.Errorf("file: %q %v", b, err)
	}
	if _, err := File(p, 2); !errors.As(err, &tl) || !strings.Contains(err.Error(), p) {
		t.Errorf("large file: %v", err)
	}
	if _, err := File("/dev/zero", 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := File(t.TempDir(), 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}
