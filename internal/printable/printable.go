// Package printable keeps what linerate prints for a person from driving the terminal:
// strings read from files (a DTB's model, a captured tree's driver names, a plan, an IRQ
// name) may hold escape sequences that move the cursor, retitle the window or rewrite
// the line before. Every control character but newline and tab is written as a visible
// \xNN escape instead, as are the C1 controls and invalid UTF-8.
package printable

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character but \n and \t escaped.
func String(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			return false
		}
	}
	return true
}

// Writer escapes what is written to w as String does. A write is escaped as a whole,
// so a UTF-8 sequence split across two writes is escaped byte by byte.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (p writer) Write(b []byte) (int, error) {
	s := string(b)
	if clean(s) {
		return p.w.Write(b)
	}
	if _, err := io.WriteString(p.w, String(s)); err != nil {
		return 0, err
	}
	return len(b), nil
}
