package station

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/readall"
	"github.com/zynqnet/linerate/plan"
)

// Golden units. A line runs a known-good board on each fixture at the start of a shift
// and every N boards: a fixture is verified once a golden board passes on it, and stays
// so for GoldenEvery boards and GoldenHours hours. A report from a fixture that is not
// verified is flagged (or rejected with --golden-policy reject); a golden board that
// fails raises the fixture's alarm at once. Golden runs are kept out of the yield.

// Golden are the golden boards, by board type and serial.
type Golden map[serialID]bool

// Golden's defaults: a fixture is verified again every 50 boards and every 8 hours.
const (
	DefaultGoldenEvery = 50
	DefaultGoldenHours = 8
)

// LoadGolden reads a golden file: a line per golden board, "BOARD SERIAL", '#' comments
// and blank lines ignored; a regular file of at most 1 MiB.
func LoadGolden(path string) (Golden, error) {
	b, err := readall.File(path, 1<<20)
	if err != nil {
		return nil, err
	}
	g := Golden{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want BOARD SERIAL", path, n)
		}
		for _, v := range f {
			if err := plan.CheckName(v); err != nil {
				return nil, fmt.Errorf("%s:%d: %q: %v", path, n, v, err)
			}
		}
		g[serialID{f[0], f[1]}] = true
	}
	if len(g) == 0 {
		return nil, fmt.Errorf("%s names no golden board (lines of BOARD SERIAL)", path)
	}
	return g, sc.Err()
}

// fixtureState is a fixture's verification: its last golden pass, and the boards tested
// on it since.
type fixtureState struct {
	Fixture      string    `json:"fixture"`
	LastGolden   time.Time `json:"last_golden,omitzero"`
	GoldenSerial string    `json:"golden_serial,omitempty"`
	Since        int       `json:"boards_since"`
	// GoldenFailed says the last golden board on it failed: unverified until one passes.
	GoldenFailed bool   `json:"golden_failed,omitempty"`
	Verified     bool   `json:"verified"`
	Why          string `json:"why,omitempty"` // why it is not verified
}

// fixtures follows each fixture's golden runs, report by report in the index's order.
type fixtures map[string]*fixtureState

// feed takes a report (under the index's lock).
func (fs fixtures) feed(r *row) {
	if r.Fixture == "" {
		return
	}
	f := fs[r.Fixture]
	if f == nil {
		f = &fixtureState{Fixture: r.Fixture}
		fs[r.Fixture] = f
	}
	switch {
	case r.Golden && r.Verdict == "PASS":
		f.LastGolden, f.GoldenSerial, f.Since, f.GoldenFailed = r.Received, r.Serial, 0, false
	case r.Golden:
		f.GoldenFailed = true
	default:
		f.Since++
	}
}

// verified says whether fixture is verified at now under the station's rules, and if not
// why ("" when it is).
func (s *Server) unverified(fixture string, now time.Time) string {
	if s.opts.Golden == nil || fixture == "" {
		return ""
	}
	f := s.idx.fixtures[fixture]
	every, hours := s.opts.GoldenEvery, s.opts.GoldenHours
	switch {
	case f == nil || f.LastGolden.IsZero():
		return fmt.Sprintf("fixture %s is not verified: no golden board has passed on it (a golden board first, then the line's)", fixture)
	case f.GoldenFailed:
		return fmt.Sprintf("fixture %s is not verified: its last golden board failed", fixture)
	case f.Since >= every:
		return fmt.Sprintf("fixture %s is due a golden board: %d boards since %s passed on it (every %d)", fixture, f.Since, f.GoldenSerial, every)
	case now.Sub(f.LastGolden) >= time.Duration(hours*float64(time.Hour)):
		return fmt.Sprintf("fixture %s is due a golden board: %s passed on it %s ago (every %gh)", fixture, f.GoldenSerial, now.Sub(f.LastGolden).Round(time.Minute), hours)
	}
	return ""
}

// fixtureList is every fixture's verification at now, for the page and the API.
func (s *Server) fixtureList(now time.Time) []fixtureState {
	var out []fixtureState
	for _, f := range s.idx.fixtures {
		v := *f
		v.Why = s.unverified(f.Fixture, now)
		v.Verified = v.Why == ""
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fixture < out[j].Fixture })
	return out
}

// checkFixture says why a report's fixture is not verified ("" when it is, when the
// station has no golden boards, or for a golden board's own report: it verifies).
func (s *Server) checkFixture(r *plan.Report, fixture string) string {
	if s.opts.Golden == nil || s.isGolden(r) {
		return ""
	}
	if err := s.refresh(); err != nil {
		return ""
	}
	s.idx.mu.RLock()
	defer s.idx.mu.RUnlock()
	return s.unverified(fixture, time.Now())
}

// isGolden says whether a report is a golden board's.
func (s *Server) isGolden(r *plan.Report) bool {
	return s.opts.Golden[serialID{r.Board, r.Serial}]
}
