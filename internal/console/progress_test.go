package console

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock steps by a fixed amount each time it is read after a step.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestProgressLog: in a log every step is a line of its own with done/total and the
// time left at the pace so far; no escape sequence.
func TestProgressLog(t *testing.T) {
	var b bytes.Buffer
	clk := &fakeClock{time.Unix(1000, 0)}
	p := NewProgress(&b, "sweep eth0", 4)
	p.now = clk.now
	p.start = clk.t
	clk.t = clk.t.Add(30 * time.Second)
	p.Step("value a")
	clk.t = clk.t.Add(30 * time.Second)
	p.Step("value b")
	p.SetTotal(10, true)
	clk.t = clk.t.Add(40 * time.Minute)
	p.Step("value c")
	p.Step("value d")
	p.End()
	want := "sweep eth0: [1/4, 1m30s left] value a\n" +
		"sweep eth0: [2/4, 1m00s left] value b\n" +
		"sweep eth0: [3/~10, ~1h35m left] value c\n" +
		"sweep eth0: [4/~10, ~1h01m left] value d\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestProgressLive: on a terminal the step is one line redrawn in place, cut to the
// width; End clears it.
func TestProgressLive(t *testing.T) {
	var term bytes.Buffer
	w := New(&term, 40)
	p := NewProgress(w, "rfc2544 eth1", 2)
	p.Step("64 bytes: throughput trial at 100.000% (1488095 fps): loss 0% pass")
	p.Step("128 bytes")
	p.End()
	got := term.String()
	for _, want := range []string{
		"\r\x1b[Krfc2544 eth1: [1/2, 0s left] 64 bytes:…",
		"\r\x1b[Krfc2544 eth1: [2/2] 128 bytes\r\x1b[K",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%q not in %q", want, got)
		}
	}
	for _, l := range strings.Split(got, "\r\x1b[K") {
		if n := len([]rune(strings.TrimSuffix(l, "\n"))); n > 39 {
			t.Errorf("a live line of %d columns on a 40-column terminal: %q", n, l)
		}
	}
}
