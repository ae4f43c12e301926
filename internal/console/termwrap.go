// Package console fits linerate's text to the operator's terminal or serial console: lines longer than the terminal is
// wide are broken at spaces, and the rest goes on under the line's value column (the
// text after the key of an aligned "key   value" report line), so a serial console of
// 80 columns shows doctor's why and fix without sideways scrolling. Width comes from the
// terminal (TIOCGWINSZ); a UART tells none, and then it is 80.
//
// Written here: the word-wrap libraries (muesli/reflow, 330 KB on linux/arm with their
// East-Asian width tables) cost what the board's binary has left; linerate's text is
// ASCII with a few UTF-8 symbols.
package console

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultWidth is the width of a terminal that does not tell (a serial console).
const DefaultWidth = 80

// OperatorEnv is set by the tester image for the shell on its serial console. That
// shell (u-root's gosh) hands its commands pipes, not the console: with it set and
// standard input a terminal, linerate takes its output to be for the console.
const OperatorEnv = "LINERATE_CONSOLE"

// atConsole reports whether output on f reaches a person at a terminal: f is one, or
// the tester image's console shell stands between (OperatorEnv).
func atConsole(f *os.File) bool {
	return isTerminal(f) || os.Getenv(OperatorEnv) != "" && isTerminal(os.Stdin)
}

// Width is the terminal's width on f: its window size, else $COLUMNS, else DefaultWidth;
// 0 when f is not a terminal (a pipe or a file: nothing is wrapped).
func Width(f *os.File) int {
	if !atConsole(f) {
		return 0
	}
	if w := windowWidth(f); w > 0 {
		return w
	}
	if w, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && w > 0 {
		return w
	}
	return DefaultWidth
}

// Writer wraps what is written to w at width columns. Lines are held until their newline;
// Flush writes a last line that has none.
type Writer struct {
	w     io.Writer
	width int
	buf   []byte
}

// New wraps w at width; width 0 passes everything through.
func New(w io.Writer, width int) *Writer { return &Writer{w: w, width: width} }

func (t *Writer) Write(p []byte) (int, error) {
	if t.width <= 0 {
		return t.w.Write(p)
	}
	t.buf = append(t.buf, p...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			break
		}
		if _, err := io.WriteString(t.w, Wrap(string(t.buf[:i]), t.width)+"\n"); err != nil {
			return 0, err
		}
		t.buf = t.buf[i+1:]
	}
	return len(p), nil
}

// Flush writes what is held.
func (t *Writer) Flush() error {
	if len(t.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(t.w, Wrap(string(t.buf), t.width))
	t.buf = nil
	return err
}

// Wrap breaks one line at spaces so that no piece is wider than width; pieces after the
// first start at the line's value column. A word longer than the room is left whole.
func Wrap(line string, width int) string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return line
	}
	indent := valueColumn(line, width)
	pad := strings.Repeat(" ", indent)
	var out strings.Builder
	rest := line
	first := true
	for {
		room := width
		if !first {
			room -= indent
		}
		if utf8.RuneCountInString(rest) <= room {
			out.WriteString(rest)
			return out.String()
		}
		cut := breakAt(rest, room, first, line)
		if cut <= 0 {
			out.WriteString(rest)
			return out.String()
		}
		out.WriteString(strings.TrimRight(rest[:cut], " ") + "\n" + pad)
		rest = strings.TrimLeft(rest[cut:], " ")
		first = false
	}
}

// breakAt is the byte offset of the last space in rest within room runes (after the
// value column on the first piece), else of the first space after it.
func breakAt(rest string, room int, first bool, line string) int {
	minCut := 0
	if first {
		minCut = valueColumn(line, len(line))
	}
	last, n := -1, 0
	for i, r := range rest {
		if n > room {
			break
		}
		if r == ' ' && i > minCut {
			last = i
		}
		n++
	}
	if last > 0 {
		return last
	}
	if i := strings.IndexByte(rest[min(len(rest), minCut+1):], ' '); i >= 0 {
		return minCut + 1 + i
	}
	return -1
}

// valueColumn is where a line's value starts, for its continuation lines: a deeply
// indented line (a continuation itself) keeps its indent; after "key:" and its spaces
// (doctor's "why:      ", "evidence: "); after a key and the run of two or more spaces
// that follows it, where the key ends in the first half (show's "    rx      packets
// ..."); else two columns in. Never past
// half the width, so a continuation keeps some room.
func valueColumn(line string, width int) int {
	lead := len(line) - len(strings.TrimLeft(line, " "))
	if lead >= width/4 {
		return min(lead, width/2)
	}
	rest := line[lead:]
	skip := func(j int) int {
		for j < len(line) && line[j] == ' ' {
			j++
		}
		return j
	}
	if f, _, ok := strings.Cut(rest, " "); ok && strings.HasSuffix(f, ":") {
		if j := skip(lead + len(f)); j < len(line) && j <= width/2 {
			return j
		}
	}
	if i := strings.Index(rest, "  "); i > 0 && lead+i <= width/2 {
		if j := skip(lead + i); j < len(line) {
			return min(j, width/2)
		}
	}
	if lead > 0 {
		return lead
	}
	return 2
}

// ForTerminal fits w for a person when it is a terminal or the tester image's console:
// text (when text is true) wrapped to its width, and with quiet, kernel messages held off
// the console until done is called. Anything else passes through.
func ForTerminal(w io.Writer, text, quiet bool) (out io.Writer, done func()) {
	f, ok := w.(*os.File)
	if !ok || !text {
		return w, func() {}
	}
	restore := func() {}
	if quiet {
		restore = QuietKernel(f)
	}
	width := Width(f)
	if width == 0 {
		return w, restore
	}
	cw := New(w, width)
	return cw, func() { cw.Flush(); restore() }
}
