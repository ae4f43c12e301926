package station

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadTokensFileRules: the station's --tokens file is held to the rules of the
// board's token file: a FIFO is refused at once (it blocked start-up, deaf to SIGTERM),
// a device is refused (/dev/zero was read without end), a file others may read is
// refused, one over MaxTokensFile too; a private regular file loads.
func TestLoadTokensFileRules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), mode)
		os.Chmod(p, mode)
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	line := "0123456789abcdef0123456789abcdef line-1\n"
	for _, c := range []struct {
		path, err string
	}{
		{write("ok", line, 0o600), ""},
		{fifo, "not a regular file"},
		{"/dev/zero", "not a regular file"},
		{write("open", line, 0o644), "mode 0644"},
		{write("big", strings.Repeat("#"+strings.Repeat("x", 99)+"\n", MaxTokensFile/100+1), 0o600), "larger than"},
		{filepath.Join(dir, "none"), "no such file"},
	} {
		start := time.Now()
		tok, err := LoadTokens(c.path)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: %v to answer", c.path, took)
		}
		if c.err == "" && (err != nil || tok == nil) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.path, err, c.err)
		}
	}
}
