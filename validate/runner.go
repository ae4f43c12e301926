package validate

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// StepFunc carries out one step on one port (its index in the plan's ports), or on the
// board as a whole (port -1: a tune across every port, a loop between two). An error
// fails the step with that reason (the station vanished, the link went away); it never
// stops the plan.
type StepFunc func(ctx context.Context, s *plan.Step, port int) (Outcome, error)

// boardLevel is a step kind that runs once for the board, not once per port.
type boardLevel interface {
	// BoardPorts are the ports a board-level step concerns in p ("" for all of them).
	BoardPorts(p *plan.Plan) string
}

// Runner runs a plan's steps in order, each under its timeout, all under the budget.
type Runner struct {
	Plan    *plan.Plan
	Do      StepFunc  // runs one step
	Console io.Writer // a progress line per step
	// Grace is how long a step that overran its timeout may take to notice
	// cancellation before it is reported as hung and left behind.
	Grace time.Duration
	// Started, when set, is told as each step starts (the station's list of boards in
	// test follows it).
	Started func(i int, s *plan.Step)
	// Link is the run's watch of its ports' links (nil: none): a flap during a step
	// fails it as a stability fault.
	Link *linkWatch
	// UndoLater leaves what the steps left to give back (a tune) to the caller's Undo:
	// validate gives it back once the verdict line is out, as nothing measures the port
	// after the last step. Else Run gives it back before it returns.
	UndoLater bool
	mu        sync.Mutex // the figures, found and undos, for the ports' steps at once
	cmu       sync.Mutex // the console
	done      Done
}

// Done is what a run of the steps gives: every result in the plan's order, the ids
// that failed, the key figures, and what the steps found, each with its port.
type Done struct {
	Steps   []plan.StepResult
	Failed  []string
	Figures map[string]float64
	Found   []PortFound
	// WindowS is how long the steps measured: each step's window, the longest of its
	// ports' when they ran at once.
	WindowS float64
}

// PortFound is what a step found (its last attempt), with the port it ran on: an
// index into the plan's ports, or -1 for a step of the whole board.
type PortFound struct {
	Port    int
	Step    string
	Figures map[string]float64 // the attempt's key figures
	Found
}

// target is one run of a step: a port (its index), or the board (-1), and the id its
// result goes by (the step's, with the port's interface in a multi-port plan).
type target struct {
	port  int
	id    string
	ports string // StepResult.Port
}

// targets are where step s runs: the board once for a board-level step, else every
// port of the plan.
func (r *Runner) targets(s *plan.Step) []target {
	if b, ok := s.Params.(boardLevel); ok && r.Plan.Multi() {
		return []target{{-1, s.ID, b.BoardPorts(r.Plan)}}
	}
	if !r.Plan.Multi() {
		return []target{{0, s.ID, ""}}
	}
	var out []target
	for i, p := range r.Plan.Ports {
		out = append(out, target{i, s.ID + "." + p.Interface, p.Interface})
	}
	return out
}

// ifacesOf are the interfaces target t runs on: its port's, or a board step's ports.
func (r *Runner) ifacesOf(t target) []string {
	ports := portsOf(r.Plan)
	if t.port >= 0 && t.port < len(ports) {
		return []string{ports[t.port].Interface}
	}
	var out []string
	for _, p := range ports {
		if t.ports == "" || slices.Contains(strings.Split(t.ports, "+"), p.Interface) {
			out = append(out, p.Interface)
		}
	}
	return out
}

// say writes a console line (whole, whatever runs at once).
func (r *Runner) say(format string, a ...any) {
	if r.Console == nil {
		return
	}
	r.cmu.Lock()
	defer r.cmu.Unlock()
	fmt.Fprintf(r.Console, format, a...)
}

// Run takes every step and returns their results and what they found. A step that
// overruns its timeout, or the budget, fails with the reason; nothing hangs. What the
// steps left to give back (Found.Undo) is given back after the last step, newest first,
// however the run ends (unless UndoLater: then by the caller's Undo).
func (r *Runner) Run(ctx context.Context) Done {
	budget, cancel := context.WithTimeout(ctx, r.Plan.Budget.D())
	defer cancel()
	grace := r.Grace
	if grace == 0 {
		grace = 5 * time.Second
	}
	r.done = Done{Figures: map[string]float64{}}
	defer func() {
		if !r.UndoLater {
			r.Undo()
		}
	}()
	figures := r.done.Figures
	since := time.Now()
	for i := range r.Plan.Steps {
		s := &r.Plan.Steps[i]
		if r.Started != nil {
			r.Started(i, s)
		}
		ts := r.targets(s)
		res := make([]plan.StepResult, len(ts))
		// A link event between two steps is the next step's: the windows the link watch
		// is read in cover the run without a gap.
		from := since
		if len(ts) > 1 && !s.Sequential {
			// Every port at once: the board loaded as in service.
			var wg sync.WaitGroup
			for j := range ts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res[j] = r.retried(budget, i, s, ts[j], grace, figures, from)
				}()
			}
			wg.Wait()
			var w float64
			for _, x := range res {
				w = max(w, x.WindowS)
			}
			r.done.WindowS += w
		} else {
			for j := range ts {
				res[j] = r.retried(budget, i, s, ts[j], grace, figures, from)
				from = time.Now()
				r.done.WindowS += res[j].WindowS
			}
		}
		since = time.Now()
		for _, x := range res {
			if !x.Pass {
				r.done.Failed = append(r.done.Failed, x.ID)
			}
			r.done.Steps = append(r.done.Steps, x)
		}
	}
	return r.done
}

// Undo gives back what the steps left to give back, newest first; once: a second call
// has nothing left to give.
func (r *Runner) Undo() {
	for i := len(r.done.Found) - 1; i >= 0; i-- {
		if u := r.done.Found[i].Undo; u != nil {
			r.done.Found[i].Undo = nil
			u(cmp.Or[io.Writer](r.Console, io.Discard))
		}
	}
}

// leftAtMost is the longest the plan can still take from step i on: the steps' timeouts
// (each try of each, on every port of a sequential step) within what is left of the
// budget. An operator waits that long at most; most steps end well before their timeout.
func (r *Runner) leftAtMost(budget context.Context, i int) time.Duration {
	var sum time.Duration
	for j := i; j < len(r.Plan.Steps); j++ {
		s := &r.Plan.Steps[j]
		n := 1
		if s.Sequential {
			n = len(r.targets(s))
		}
		sum += s.Timeout.D() * time.Duration((s.Retry+1)*n)
	}
	if dl, ok := budget.Deadline(); ok {
		sum = min(sum, time.Until(dl))
	}
	return sum.Round(time.Second)
}

// found keeps what an attempt found: a retried step's last attempt's, whose Undo still
// runs for each attempt.
func (r *Runner) found(f PortFound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.done.Found {
		if x.Port == f.Port && x.Step == f.Step {
			if undo := x.Undo; f.Undo == nil {
				f.Undo = undo
			} else if undo != nil {
				g := f.Undo
				f.Undo = func(w io.Writer) { g(w); undo(w) }
			}
			r.done.Found[i] = f
			return
		}
	}
	r.done.Found = append(r.done.Found, f)
}

// retried runs step i on its target, again while it fails, up to the step's Retry
// times; the result keeps the failed attempts.
func (r *Runner) retried(budget context.Context, i int, s *plan.Step, t target, grace time.Duration, figures map[string]float64, from time.Time) plan.StepResult {
	var earlier []plan.StepResult
	var res plan.StepResult
	for try := 0; ; try++ {
		res = r.attempt(budget, i, s, t, grace, figures, from)
		from = time.Now()
		if res.Pass || try >= s.Retry || budget.Err() != nil {
			break
		}
		earlier = append(earlier, res)
		r.say("linerate validate: step %d/%d %-10s again (retry %d of %d)\n", i+1, len(r.Plan.Steps), t.id, try+1, s.Retry)
	}
	res.Attempts = earlier
	return res
}

// attempt runs step i once on its target and says so on the console; its figures go
// into figures. The link events of its ports since from are its own.
func (r *Runner) attempt(budget context.Context, i int, s *plan.Step, t target, grace time.Duration, figures map[string]float64, from time.Time) plan.StepResult {
	start := time.Now()
	res := plan.StepResult{ID: t.id, Type: s.Type, Port: t.ports}
	var o Outcome
	var err error
	switch {
	case budget.Err() != nil:
		err = fmt.Errorf("the plan's budget of %v ran out before this step", r.Plan.Budget.D())
	default:
		// A step can take a while: the console says what runs, and for how long at most.
		r.say("linerate validate: step %d/%d %-10s %-8s running (up to %v; the plan at most %v more)\n", i+1, len(r.Plan.Steps), t.id, s.Type, s.Timeout.D(), r.leftAtMost(budget, i))
		o, err = runOne(budget, r.Do, s, t.port, grace)
	}
	res.Seconds = time.Since(start).Seconds()
	res.WindowS = min(o.Window.Seconds(), res.Seconds)
	res.SetupS = res.Seconds - res.WindowS
	res.Pass = err == nil && (o.Pass || o.Skip)
	res.Skipped = err == nil && o.Skip
	res.Summary, res.Reason, res.Measured = o.Summary, o.Reason, o.Measured
	if err != nil {
		res.Reason = err.Error()
		if res.Summary == "" {
			res.Summary = err.Error()
		}
	}
	judgeLimits(&res, s.AllLimits())
	holdLink(&res, s.Type, r.Link.Events(r.ifacesOf(t), from, time.Now()))
	if s.Type == "link" && res.Pass {
		r.Link.settle(r.ifacesOf(t), time.Now())
		if slices.ContainsFunc(r.Plan.Steps[i+1:], func(s plan.Step) bool { return s.Type == "doctor" }) {
			r.Link.takeBase(r.ifacesOf(t))
		}
	} else {
		r.Link.keepBase(r.ifacesOf(t), s.Type)
	}
	if o.Detail != nil {
		if b, jerr := json.Marshal(o.Detail); jerr == nil {
			res.Detail = b
		}
	}
	r.mu.Lock()
	for k, v := range o.Figures {
		figures[k] = v
	}
	r.mu.Unlock()
	r.found(PortFound{Port: t.port, Step: s.ID, Figures: o.Figures, Found: o.Found})
	word := "PASS"
	switch {
	case !res.Pass:
		word = "FAIL"
	case res.Skipped:
		word = "SKIP"
	case marginalText(res) != "":
		word = "PASS"
		res.Summary += " [marginal: " + marginalText(res) + "]"
	}
	line := res.Summary
	if !res.Pass && res.Reason != "" && res.Reason != res.Summary {
		line += ": " + res.Reason
	}
	r.say("linerate validate: step %d/%d %-10s %-8s %s  %s (%.1fs)\n", i+1, len(r.Plan.Steps), t.id, s.Type, word, line, res.Seconds)
	return res
}

func runOne(ctx context.Context, fn StepFunc, s *plan.Step, port int, grace time.Duration) (Outcome, error) {
	sctx, cancel := context.WithTimeout(ctx, s.Timeout.D())
	defer cancel()
	type ret struct {
		o   Outcome
		err error
	}
	ch := make(chan ret, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- ret{err: fmt.Errorf("step crashed: %v", p)}
			}
		}()
		o, err := fn(sctx, s, port)
		ch <- ret{o, err}
	}()
	select {
	case r := <-ch:
		if r.err == nil && sctx.Err() == context.DeadlineExceeded && !r.o.Pass && r.o.Reason == "" {
			r.o.Reason = fmt.Sprintf("timed out after %v", s.Timeout.D())
		}
		return r.o, r.err
	case <-sctx.Done():
	}
	select {
	case r := <-ch:
		if r.err == nil && !r.o.Pass && r.o.Reason == "" {
			r.o.Reason = fmt.Sprintf("timed out after %v", s.Timeout.D())
		}
		return r.o, r.err
	case <-time.After(grace):
		return Outcome{}, fmt.Errorf("timed out after %v and did not stop; left behind", s.Timeout.D())
	}
}

// judgeLimits judges the step's measurements against its limits (its kind's thresholds
// and the plan's limits:): one outside fails the step, with the reason when the kind
// gave none.
func judgeLimits(res *plan.StepResult, limits []plan.Limit) {
	res.Limits = plan.JudgeLimits(limits, res.Measured)
	for _, l := range res.Limits {
		if l.Status != plan.LimitFail || !res.Pass && res.Reason != "" {
			continue
		}
		res.Pass, res.Skipped = false, false
		res.Reason = fmt.Sprintf("%s %.6g outside its limit %s", l.Measurement, l.Value, l.Limit)
	}
}

// marginalText names the step's measurements in their marginal bands, with their values
// and limits ("" for none).
func marginalText(res plan.StepResult) string {
	var out []string
	for _, l := range res.Limits {
		if l.Status == plan.LimitMarginal {
			out = append(out, fmt.Sprintf("%s %.6g in %s", l.Measurement, l.Value, l.Limit))
		}
	}
	return strings.Join(out, "; ")
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
