package console

import (
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// Progress says how far long work has come (an RFC 2544 run, a sweep, a comparison):
// steps done of the total and the time left at the pace so far. On a terminal it is
// one live line, redrawn in place; elsewhere (a log, a pipe, the station's capture of a
// serial console) a line per step, so that a log says the same without escape
// sequences.
type Progress struct {
	w      io.Writer // whole lines
	live   io.Writer // the terminal itself; nil when w is not one
	width  int
	what   string // "rfc2544 eth1"
	total  int
	approx bool // total is an estimate (a search whose length depends on what it finds)
	done   int
	start  time.Time
	last   string // the live line on the screen, "" when none
	now    func() time.Time
}

// NewProgress counts total steps of what (a command and its port), written to w.
func NewProgress(w io.Writer, what string, total int) *Progress {
	p := &Progress{w: w, what: what, total: total, now: time.Now}
	if cw, ok := w.(*Writer); ok && cw.width > 0 {
		p.live, p.width = cw.w, cw.width
	}
	p.start = p.now()
	return p
}

// SetTotal changes the count of steps; approx marks it an estimate ("12/~40").
func (p *Progress) SetTotal(total int, approx bool) {
	p.total, p.approx = max(total, p.done), approx
}

// Status is "3/8, 2m10s left": steps done of the total and the time left, once a step
// has set the pace.
func (p *Progress) Status() string {
	tilde := ""
	if p.approx {
		tilde = "~"
	}
	s := fmt.Sprintf("%d/%s%d", p.done, tilde, p.total)
	if p.done > 0 && p.total > p.done {
		el := p.now().Sub(p.start)
		left := el / time.Duration(p.done) * time.Duration(p.total-p.done)
		s += ", " + tilde + shortDuration(left) + " left"
	}
	return s
}

// Step marks one step done and says what it was: on a terminal the live line, in a log
// a line of its own.
func (p *Progress) Step(text string) {
	p.done++
	if p.total < p.done {
		p.total = p.done
	}
	line := fmt.Sprintf("%s: [%s] %s", p.what, p.Status(), text)
	if p.live == nil {
		fmt.Fprintln(p.w, line)
		return
	}
	p.draw(line)
}

// End takes the live line off the screen; in a log it prints nothing.
func (p *Progress) End() {
	if p.live != nil {
		p.clear()
	}
}

func (p *Progress) draw(line string) {
	if n := p.width - 1; utf8.RuneCountInString(line) > n && n > 0 {
		r := []rune(line)
		line = string(r[:n-1]) + "…"
	}
	fmt.Fprint(p.live, "\r\x1b[K"+line)
	p.last = line
}

func (p *Progress) clear() {
	if p.last != "" {
		fmt.Fprint(p.live, "\r\x1b[K")
		p.last = ""
	}
}

// shortDuration is a time left as a person reads it: 45s, 2m10s, 1h05m.
func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
