package console

import (
	"bytes"
	"strings"
	"testing"
)

func TestWrapShowRow(t *testing.T) {
	line := "    driver (ethtool -S)            tx_octets 8169027796992  tx_frames 21  tx_65_127_byte_frames 21  q0_tx_packets 1  q0_tx_bytes 74"
	got := Wrap(line, 80)
	for _, l := range strings.Split(got, "\n") {
		if len(l) > 80 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
	lines := strings.Split(got, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], strings.Repeat(" ", 35)+"q0_") && !strings.HasPrefix(lines[1], strings.Repeat(" ", 35)+"tx_") {
		t.Errorf("continuation not under the value column:\n%s", got)
	}
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(line), " ") {
		t.Errorf("words lost or changed:\n%s", got)
	}
}

func TestWrapDoctorWhy(t *testing.T) {
	line := "         why:      macb's NAPI weight is fixed at 64 and there is no per-device napi_rx_weight; what can be tuned is net.core.dev_weight"
	got := Wrap(line, 80)
	for i, l := range strings.Split(got, "\n") {
		if len(l) > 80 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
		if i > 0 && !strings.HasPrefix(l, strings.Repeat(" ", 19)) {
			t.Errorf("continuation %q not under the text (column 19)", l)
		}
	}
}

func TestWrapColumns(t *testing.T) {
	for _, tc := range []struct {
		line   string
		indent int
	}{
		// doctor: the text after "evidence: " (one space) goes on under itself
		{"         evidence: below_need=net.core.rmem_max net.core.wmem_max needed_bytes=4194304 net.core.rmem_max=212992", 19},
		// show: a continuation row keeps its indent
		{strings.Repeat(" ", 35) + "q0_tx_packets 5  q0_tx_bytes 446  q1_tx_packets 5  q1_tx_bytes 466  (44 more at 0)", 35},
		// a heading line: two in
		{"eth0 (macb, board zcu102): 0 fail, 2 warn, 1 info  [profile throughput, 3.0s between samples]", 2},
	} {
		lines := strings.Split(Wrap(tc.line, 80), "\n")
		if len(lines) < 2 {
			t.Fatalf("not wrapped: %q", tc.line)
		}
		for _, l := range lines[1:] {
			if got := len(l) - len(strings.TrimLeft(l, " ")); got != tc.indent {
				t.Errorf("%q: continuation at column %d, want %d", l, got, tc.indent)
			}
		}
	}
}

func TestWrapEdges(t *testing.T) {
	if got := Wrap("short", 80); got != "short" {
		t.Error(got)
	}
	long := strings.Repeat("x", 120)
	if got := Wrap(long, 80); got != long {
		t.Errorf("an unbreakable word was cut: %q", got)
	}
	if got := Wrap("a "+long+" b", 80); got != "a "+long+"\n  b" {
		t.Errorf("%q", got)
	}
	if got := Wrap("µs µs µs µs µs µs µs µs µs µs", 12); strings.Contains(got, "\xb5 ") || !strings.Contains(got, "µs") {
		t.Errorf("UTF-8 cut: %q", got)
	}
}

func TestWriterHoldsPartialLines(t *testing.T) {
	var b bytes.Buffer
	w := New(&b, 20)
	w.Write([]byte("one two three four "))
	w.Write([]byte("five six\nseven"))
	if b.String() != "one two three four\n  five six\n" {
		t.Fatalf("%q", b.String())
	}
	w.Flush()
	if !strings.HasSuffix(b.String(), "seven") {
		t.Fatalf("%q", b.String())
	}
	var pass bytes.Buffer
	New(&pass, 0).Write([]byte(strings.Repeat("y ", 100)))
	if pass.Len() != 200 {
		t.Fatal("width 0 changed the text")
	}
}
