package printable

import (
	"bytes"
	"testing"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"ZynqMP ZCU102 Rev1.0":      "ZynqMP ZCU102 Rev1.0",
		"line\n\tindented":          "line\n\tindented",
		"evil\x1b]0;pwned\x07title": `evil\x1b]0;pwned\x07title`,
		"\x1b[2J\x1b[Hclear":        `\x1b[2J\x1b[Hclear`,
		"over\rwrite":               `over\x0dwrite`,
		"del\x7f":                   `del\x7f`,
		"c1 \u009b31m":              `c1 \u009b31m`,
		"bad \xff utf8":             `bad \xff utf8`,
		"µs and — are fine":         "µs and — are fine",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := Writer(&b)
	n, err := w.Write([]byte("model \x1b[31mred\n"))
	if err != nil || n != 15 || b.String() != "model \\x1b[31mred\n" {
		t.Fatalf("%d %v %q", n, err, b.String())
	}
}
