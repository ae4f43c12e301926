package station

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zynqnet/linerate/internal/printable"
)

// Every report the station refuses is counted by reason in
// linerate_reports_refused_total and logged, one line each, naming the poster (the
// token's name and the address) and the board's serial where the body had one:
//
//	no-token    401: no valid write token
//	too-large   413: over MaxReportBytes
//	unreadable  400: the body could not be read (the board went away mid-post)
//	malformed   400: not a report (not JSON, wrong types)
//	invalid     422: a report that fails the door's checks
//	id-conflict, duplicate-mac, and the policies' kinds (unknown-plan, ...): 409
//
// A board or a script posting in a loop must not fill the station's disk: past
// refusalBurst lines in a refusalWindow the lines are left out (the counter still
// counts them), and the next window's first line says how many were.

const (
	refusalBurst  = 20
	refusalWindow = time.Minute
)

// refusals counts refused reports and writes their log lines, rate-limited.
type refusals struct {
	count *prometheus.CounterVec
	log   *log.Logger
	now   func() time.Time // time.Now; tests move it

	mu          sync.Mutex
	windowStart time.Time
	lines       int // written in the window
	left        int // left out in the window
}

func newRefusals(l *log.Logger) *refusals {
	return &refusals{log: l, now: time.Now,
		count: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_reports_refused_total", Help: "Reports the station refused, by reason (no-token, too-large, unreadable, malformed, invalid, id-conflict, duplicate-mac, a policy's kind)."}, []string{"reason"})}
}

// report counts a refused report and logs it: reason, who posted it, its id and serial
// when known (from the body, however bad the rest), and why.
func (r *refusals) report(reason, who, id, serial string, why error) {
	r.count.WithLabelValues(reason).Inc()
	var b strings.Builder
	fmt.Fprintf(&b, "report")
	if id != "" {
		fmt.Fprintf(&b, " %s", id)
	}
	fmt.Fprintf(&b, " from %s", who)
	if serial != "" {
		fmt.Fprintf(&b, ", serial %s", serial)
	}
	fmt.Fprintf(&b, ", refused (%s): %v", reason, why)
	r.logf("%s", b.String())
}

// logf writes a refusal's line unless the window's lines are spent.
func (r *refusals) logf(format string, a ...any) {
	r.mu.Lock()
	now := r.now()
	var left int
	if now.Sub(r.windowStart) >= refusalWindow {
		left = r.left
		r.windowStart, r.lines, r.left = now, 0, 0
	}
	write := r.lines < refusalBurst
	if write {
		r.lines++
	} else {
		r.left++
	}
	r.mu.Unlock()
	if left > 0 {
		r.log.Printf("%d refusal lines left out in the minute before (linerate_reports_refused_total counts every refusal)", left)
	}
	if write {
		r.log.Print(printable.String(strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", " ")))
	}
}

// serialOf is the serial a refused body names: a bad report still says which board
// sent it. Read key by key from the start, so a body cut short or broken after its
// serial still gives it. Bounded and escaped: it goes to the log.
func serialOf(body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for {
		k, err := dec.Token()
		key, ok := k.(string)
		if err != nil || !ok {
			return ""
		}
		if key != "serial" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return ""
			}
			continue
		}
		v, _ := dec.Token()
		s, _ := v.(string)
		if len(s) > 64 {
			s = s[:64] + "..."
		}
		return printable.String(strings.NewReplacer("\n", " ", "\t", " ").Replace(s))
	}
}
