package station

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// A worn station cable or switch port fails good boards one after another: when one
// step fails on N different serials in a row on one fixture, the station raises a
// "fixture suspect" alarm. A PASS on that fixture, or an operator's acknowledgement,
// clears it; one bad board failing again and again (its retests) raises nothing.

// Alarm is a raised alarm.
type Alarm struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"` // fixture-suspect
	Fixture string    `json:"fixture"`
	Step    string    `json:"step"`
	Serials []string  `json:"serials"` // the boards that failed it in a row, oldest first
	Reports []string  `json:"reports"`
	Raised  time.Time `json:"raised"` // when the Nth report came
	Text    string    `json:"text"`
}

// DefaultFixtureAlarm is how many different serials failing one step in a row on one
// fixture raise the alarm.
const DefaultFixtureAlarm = 3

// streak is one step's run of failures on one fixture.
type streak struct {
	serials, reports []string
}

// alarms follows the reports in the order the store has them.
type alarms struct {
	n       int
	streaks map[string]map[string]*streak // fixture -> step -> its failures in a row
	active  map[string]*Alarm             // fixture NUL step -> the alarm
	acked   map[string]Ack                // alarm id -> its acknowledgement
	// cleared counts the alarms cleared (by a PASS or an acknowledgement), for the log.
	cleared int
}

func newAlarms(n int, acks []Ack) *alarms {
	if n <= 0 {
		n = DefaultFixtureAlarm
	}
	a := &alarms{n: n, streaks: map[string]map[string]*streak{}, active: map[string]*Alarm{}, acked: map[string]Ack{}}
	for _, k := range acks {
		a.acked[k.Alarm] = k
	}
	return a
}

// feed takes the next report; it returns an alarm it raised (nil for none).
func (a *alarms) feed(r *row) *Alarm {
	f := r.Fixture
	if f == "" {
		return nil // no fixture known: nothing to tell apart
	}
	if r.Golden && r.Verdict != "PASS" {
		return a.golden(r)
	}
	if r.Verdict == "PASS" {
		delete(a.streaks, f)
		for k, al := range a.active {
			if al.Fixture == f {
				delete(a.active, k)
				a.cleared++
			}
		}
		return nil
	}
	steps := a.streaks[f]
	if steps == nil {
		steps = map[string]*streak{}
		a.streaks[f] = steps
	}
	for step := range steps {
		if !slices.Contains(r.FixtureFailed, step) {
			delete(steps, step) // no longer in a row
		}
	}
	var raised *Alarm
	// The board's own faults (its identity, its PHY) are no fixture's: they count not.
	for _, step := range r.FixtureFailed {
		st := steps[step]
		if st == nil {
			st = &streak{}
			steps[step] = st
		}
		if !slices.Contains(st.serials, r.Serial) {
			st.serials = append(st.serials, r.Serial)
		}
		st.reports = append(st.reports, r.ID)
		key := f + "\x00" + step
		if len(st.serials) < a.n || a.active[key] != nil {
			continue
		}
		al := &Alarm{ID: alarmID(f, step, st.reports[0]), Kind: "fixture-suspect", Fixture: f, Step: step,
			Serials: slices.Clone(st.serials), Reports: slices.Clone(st.reports), Raised: r.Received}
		al.Text = fmt.Sprintf("fixture %s suspect: step %s failed on %d different boards in a row (%s); check the station's cable and port before the next board", f, step, len(al.Serials), strings.Join(al.Serials, ", "))
		if _, ok := a.acked[al.ID]; ok {
			delete(steps, step) // acknowledged: the operator looked; a new run of failures starts over
			continue
		}
		a.active[key] = al
		raised = al
	}
	return raised
}

// golden raises a fixture's alarm at once: its golden board failed on it.
func (a *alarms) golden(r *row) *Alarm {
	key := r.Fixture + "\x00golden"
	if a.active[key] != nil {
		return nil
	}
	al := &Alarm{ID: alarmID(r.Fixture, "golden", r.ID), Kind: "golden-failed", Fixture: r.Fixture, Step: strings.Join(r.Failed, ","),
		Serials: []string{r.Serial}, Reports: []string{r.ID}, Raised: r.Received}
	al.Text = fmt.Sprintf("fixture %s failed its golden board %s (%s): stop it and check its cable, port and station before the next board", r.Fixture, r.Serial, strings.Join(r.Failed, ", "))
	if _, ok := a.acked[al.ID]; ok {
		return nil
	}
	a.active[key] = al
	return al
}

// ack clears an alarm by its id; false when no such alarm is raised.
func (a *alarms) ack(k Ack) bool {
	a.acked[k.Alarm] = k
	for key, al := range a.active {
		if al.ID == k.Alarm {
			delete(a.active, key)
			delete(a.streaks[al.Fixture], al.Step)
			a.cleared++
			return true
		}
	}
	return false
}

// list is the raised alarms, oldest first.
func (a *alarms) list() []Alarm {
	out := []Alarm{}
	for _, al := range a.active {
		out = append(out, *al)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Raised.Equal(out[j].Raised) {
			return out[i].Raised.Before(out[j].Raised)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// alarmID names an alarm by its fixture, step and the first report of its run: the
// same run of failures is the same alarm on every station of a line.
func alarmID(fixture, step, first string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
				return r
			}
			return '_'
		}, s)
	}
	id := "fixture-" + clean(fixture) + "-" + clean(step) + "-" + clean(first)
	if len(id) > MaxIDLen {
		id = id[:MaxIDLen]
	}
	return id
}
