package validate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
)

// Counters fails when an error counter of the port rose during the run (since the run
// read them at its start), but those it ignores.
type Counters struct {
	Ignore []string `yaml:"ignore" json:"ignore,omitempty" doc:"error counters that may rise"`
}

// Check: ignore names the port's error counters.
func (s *Counters) Check(*plan.Plan) error {
	for _, c := range s.Ignore {
		if !slices.Contains(nic.ErrorCounterNames, c) {
			return fmt.Errorf("ignore: %q is not an error counter (have %s)", c, strings.Join(nic.ErrorCounterNames, ", "))
		}
	}
	return nil
}

// Timeout: one read of the counters.
func (s *Counters) Timeout() time.Duration { return 10 * time.Second }

// Run reads the counters again and compares them with the run's start.
func (s *Counters) Run(ctx context.Context, e Env) (Outcome, error) {
	now, err := errorCounters(e.Root, e.API, e.Iface)
	if err != nil {
		return Outcome{}, fmt.Errorf("no statistics for %s: %w", e.Iface, err)
	}
	return s.Judge(e.Counters, now), nil
}

// errorCounters reads the port's error counters.
func errorCounters(root, api, iface string) (map[string]uint64, error) {
	rd, closeFn, err := nic.Open(liveOrRoot(root), api)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	st, err := rd.LinkStats(iface)
	if err != nil {
		return nil, err
	}
	return st.ErrorCounters(), nil
}

// Judge: no error counter rose between before and after, but those the step ignores. A
// counter that went backwards (the driver was reloaded) counts as no rise.
func (s *Counters) Judge(before, after map[string]uint64) Outcome {
	var rose []string
	measured := map[string]float64{}
	for _, c := range nic.ErrorCounterNames {
		var d uint64
		if after[c] > before[c] {
			d = after[c] - before[c]
		}
		measured[c] = float64(d)
		if d > 0 && !slices.Contains(s.Ignore, c) {
			rose = append(rose, fmt.Sprintf("%s +%d", c, d))
		}
	}
	o := Outcome{Pass: len(rose) == 0, Measured: measured}
	if o.Pass {
		o.Summary = fmt.Sprintf("no error counter rose during the run (%d watched)", len(after))
	} else {
		o.Summary = "error counters rose: " + strings.Join(rose, ", ")
		o.Reason = o.Summary
	}
	return o
}
