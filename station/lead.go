package station

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The line lead's glance: tiles for today (first-pass and final yield, tests an hour
// against the line's target, boards in test, open alarms), banners for today's duplicate
// MACs and the boards at their retest limit, and the yield per fixture.

// tile is one figure of the page's head.
type tile struct {
	Label, Value, Sub string
	Class             string // "", "low" (below target), "alarm"
}

// banner is a thing of today the line lead must act on, with up to five serials.
type banner struct {
	Text    string
	Serials []string
	More    int
	Link    string
}

// FixtureYield is a fixture's first-pass yield over the boards first tested on it.
type FixtureYield struct {
	Fixture string  `json:"fixture"`
	Tested  int     `json:"tested"`
	Passed  int     `json:"passed"`
	Pct     float64 `json:"pct"`
}

// todayTiles are the yield and pace tiles of today (the station's local day) over the
// rows selected; the boards in test and alarms tiles are added by the page.
func todayTiles(rows []*row, h Hours, target float64, now time.Time) []tile {
	today := dayOf(now)
	tested, passed, final := 0, 0, 0
	for i := len(rows) - 1; i >= 0 && rows[i].Day >= today; i-- {
		x := rows[i]
		if x.Day != today || !x.First || x.Golden {
			continue
		}
		tested++
		if x.Verdict == "PASS" {
			passed++
		}
		if x.FinalPass {
			final++
		}
	}
	pct := func(n int) string {
		if tested == 0 {
			return "-"
		}
		return strconv.FormatFloat(100*float64(n)/float64(tested), 'f', 1, 64) + "\u00a0%"
	}
	pace := tile{Label: "tests an hour", Value: trim(h.PerHour), Sub: fmt.Sprintf("%d today", h.Reports)}
	if target > 0 {
		pace.Sub += ", target " + trim(target)
		if h.PerHour < target {
			pace.Class = "low"
		}
	}
	return []tile{
		{Label: "first-pass yield today", Value: pct(passed), Sub: fmt.Sprintf("%d of %d boards", passed, tested)},
		{Label: "final yield today", Value: pct(final), Sub: fmt.Sprintf("%d of %d boards", final, tested)},
		pace,
	}
}

// banners are today's duplicate MACs and the boards whose latest report is at the
// retest limit without a pass.
func banners(rows []*row, now time.Time) []banner {
	today := dayOf(now)
	var dups []string
	latest := map[histKey]*row{}
	for _, x := range rows {
		if x.Day == today && x.Dup && !slices.Contains(dups, x.Serial) {
			dups = append(dups, x.Serial)
		}
		k := histKey{x.Board, x.Serial, x.MAC}
		if l := latest[k]; l == nil || !x.Started.Before(l.Started) {
			latest[k] = x
		}
	}
	var repair []string
	for _, x := range rows {
		if l := latest[histKey{x.Board, x.Serial, x.MAC}]; l == x && x.Repair && x.Verdict != "PASS" && !slices.Contains(repair, x.Serial) {
			repair = append(repair, x.Serial)
		}
	}
	slices.Sort(repair)
	var out []banner
	mk := func(text string, serials []string, link string) {
		if len(serials) == 0 {
			return
		}
		shown, more := cut(serials, 5)
		out = append(out, banner{Text: fmt.Sprintf(text, len(serials)), Serials: shown, More: more, Link: link})
	}
	mk("%d board(s) with a duplicate MAC today", dups, "/?duplicate=1&from="+url.QueryEscape(dayText(today)))
	mk("%d board(s) at the retest limit without a pass: for repair", repair, "/?retest=1")
	return out
}

// fixtureYields is each fixture's first-pass yield over the boards first tested on it,
// the worst first (golden boards are the fixtures' own checks, left out).
func fixtureYields(rows []*row) []FixtureYield {
	agg := map[string]*FixtureYield{}
	for _, x := range rows {
		if !x.First || x.Golden || x.Fixture == "" {
			continue
		}
		y := agg[x.Fixture]
		if y == nil {
			y = &FixtureYield{Fixture: x.Fixture}
			agg[x.Fixture] = y
		}
		y.Tested++
		if x.Verdict == "PASS" {
			y.Passed++
		}
	}
	out := make([]FixtureYield, 0, len(agg))
	for _, y := range agg {
		y.Pct = 100 * float64(y.Passed) / float64(y.Tested)
		out = append(out, *y)
	}
	slices.SortFunc(out, func(a, b FixtureYield) int {
		if a.Pct != b.Pct {
			if a.Pct < b.Pct {
				return -1
			}
			return 1
		}
		if a.Tested != b.Tested {
			return b.Tested - a.Tested
		}
		return strings.Compare(a.Fixture, b.Fixture)
	})
	return out
}
