package station

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// row is a report as the station keeps it in memory: what the page's tables, filters,
// charts and alarms read. The figures stay in the store and are read for the rows shown.
// A million reports take a few hundred megabytes here, and the page reads no store.
type row struct {
	ID, Board, Serial, MAC, Verdict, Fixture string
	Failed                                   []string
	Received                                 time.Time
	// Started is when the board started the run (Received when it did not say): a
	// serial's attempts are in that order, whatever order the spool delivered them in.
	Started               time.Time
	Day                   int32 // YYYYMMDD of Received, the station's local time
	Seconds               float64
	Attempt               int
	Dup, Marginal, Golden bool
	Repair                bool // flagged for repair (--max-attempts)
	// FixtureFailed are the failed steps a fixture could have failed: not the board's
	// own faults (identity, the PHY, a duplicate MAC the station refused).
	FixtureFailed  []string
	TCPUp, TCPDown float64 // NaN: none measured
	// PortTCP are a multi-port report's TCP figures per port and direction.
	PortTCP []portFigure
	Steps   []stepTime
	// First says this is its serial's first report (of its board type); on a first,
	// FinalPass says whether the serial's latest report passed (the final yield).
	First, FinalPass bool
	// Ports are a multi-port report's ports and whether each passed.
	Ports []portPass
	// Trace is what produced it (interned: a line runs few of each).
	Trace trace
}

// portFigure is one port's TCP figure of a direction: "eth1 TCP up" and Mbit/s.
type portFigure struct {
	Name string
	V    float64
}

// trace is what produced a report, as the page and the API filter by it.
type trace struct {
	Plan, Build, Kernel, UBoot, Operator, Station string
}

// traceKeys are the query's keys of trace, each with its field.
var traceKeys = []struct {
	key string
	of  func(*trace) *string
}{
	{"plan", func(t *trace) *string { return &t.Plan }}, {"build", func(t *trace) *string { return &t.Build }},
	{"kernel", func(t *trace) *string { return &t.Kernel }}, {"uboot", func(t *trace) *string { return &t.UBoot }},
	{"operator", func(t *trace) *string { return &t.Operator }}, {"station_version", func(t *trace) *string { return &t.Station }},
}

// traceOf is a record's trace, its texts interned.
func (x *index) traceOf(rec *record) trace {
	t := trace{Plan: rec.PlanSHA256, Kernel: rec.Kernel, UBoot: rec.UBoot, Operator: rec.Operator, Station: rec.StationVersion}
	if rec.Build != nil {
		t.Build = rec.Build.ID
	}
	for _, k := range traceKeys {
		f := k.of(&t)
		*f = x.in(*f)
	}
	return t
}

// matchTrace says whether t has every trace value q asks for (a plan's hash by a
// prefix of at least 8 characters).
func matchTrace(t *trace, q map[string]string) bool {
	for _, k := range traceKeys {
		want, have := q[k.key], *k.of(t)
		switch {
		case want == "":
		case k.key == "plan" && len(want) >= 8 && strings.HasPrefix(have, want):
		case want != have:
			return false
		}
	}
	return true
}

// portPass is one port of a multi-port report and its verdict.
type portPass struct {
	Iface string
	Pass  bool
}

// stepTime is a step (its number in the index's step names) and how long it took.
type stepTime struct {
	Step    uint16
	Seconds float32
}

// dayOf is t's day in the station's local time, as YYYYMMDD.
func dayOf(t time.Time) int32 {
	y, m, d := t.Local().Date()
	return int32(y*10000 + int(m)*100 + d)
}

// dayText is a YYYYMMDD day as 2006-01-02.
func dayText(d int32) string { return fmt.Sprintf("%04d-%02d-%02d", d/10000, d/100%100, d%100) }

// serialID is a board's identity: board type and serial.
type serialID struct{ board, serial string }

// histKey is a board's identity for its attempts: board type, serial and MAC, as the
// store counts them (a serial seen on another MAC is a reused serial, another board).
type histKey struct{ board, serial, mac string }

// index is the station's view of its store, oldest report first, kept in step by
// reading what came after its cursor (other stations' reports on a shared database
// included). Alarms follow it report by report.
type index struct {
	mu     sync.RWMutex
	rows   []row
	byID   map[string]int
	cursor string
	alarms *alarms
	// intern keeps one copy of the strings that repeat (boards, fixtures, verdicts).
	intern map[string]string
	// steps names the step numbers of stepTime; stepNo numbers the names.
	steps  []string
	stepNo map[string]uint16
	// serials are each board's report ids in the order the board started them.
	serials map[histKey][]string
	// boards and fixtures seen, the page's choices.
	boards, fixtureNames map[string]bool
	// fixtures are the fixtures' golden verifications.
	fixtures fixtures
	// pop is every measurement's population of passing boards.
	pop population
}

func newIndex(a *alarms) index {
	return index{byID: map[string]int{}, intern: map[string]string{}, alarms: a, stepNo: map[string]uint16{}, serials: map[histKey][]string{},
		boards: map[string]bool{}, fixtureNames: map[string]bool{}, fixtures: fixtures{}}
}

func (x *index) in(s string) string {
	if v, ok := x.intern[s]; ok {
		return v
	}
	if len(x.intern) < 100_000 {
		x.intern[s] = s
	}
	return s
}

// step is the number of a step id (past 65,535 distinct ids, the last one's).
func (x *index) step(id string) uint16 {
	if n, ok := x.stepNo[id]; ok {
		return n
	}
	if len(x.steps) == math.MaxUint16 {
		return math.MaxUint16 - 1
	}
	n := uint16(len(x.steps))
	x.steps = append(x.steps, id)
	x.stepNo[id] = n
	return n
}

// add takes a record in; false when it is there already (a re-read overlap).
func (x *index) add(rec *record) (*row, bool) {
	if _, ok := x.byID[rec.ID]; ok {
		return nil, false
	}
	r := row{ID: rec.ID, Board: x.in(rec.Board), Serial: rec.Serial, MAC: rec.MAC, Verdict: x.in(rec.Verdict), Fixture: x.in(rec.Fixture),
		Received: rec.Received, Day: dayOf(rec.Received), Seconds: rec.Seconds, Attempt: rec.Attempt, Dup: len(rec.DuplicateMAC) > 0, Marginal: len(rec.Marginal) > 0, Golden: rec.Golden,
		TCPUp: math.NaN(), TCPDown: math.NaN(), Started: rec.Started}
	if r.Started.IsZero() {
		r.Started = rec.Received
	}
	r.Repair = slices.ContainsFunc(rec.Flags, func(f ReportFlag) bool { return f.Kind == FlagRepair })
	for _, f := range rec.Failed {
		r.Failed = append(r.Failed, x.in(f))
		if !boardFault(rec, f) {
			r.FixtureFailed = append(r.FixtureFailed, x.in(f))
		}
	}
	if v, ok := rec.TCP["up"]; ok {
		r.TCPUp = v
	}
	if v, ok := rec.TCP["down"]; ok {
		r.TCPDown = v
	}
	for _, k := range sortedKeys(rec.TCP) {
		if dir, port, ok := strings.Cut(k, "."); ok {
			r.PortTCP = append(r.PortTCP, portFigure{x.in(port + " TCP " + dir), rec.TCP[k]})
		}
	}
	if r.Attempt == 0 {
		r.Attempt = 1
	}
	for _, p := range rec.Ports {
		r.Ports = append(r.Ports, portPass{x.in(p.Interface), p.Verdict == "PASS"})
	}
	r.Trace = x.traceOf(rec)
	r.Steps = make([]stepTime, len(rec.Steps))
	for i, st := range rec.Steps {
		r.Steps[i] = stepTime{x.step(st.ID), float32(st.Seconds)}
	}
	x.boards[r.Board] = true
	if r.Fixture != "" {
		x.fixtureNames[r.Fixture] = true
	}
	// Oldest first: a report that reached another station first, or a post that
	// overtook a read, goes in at its place (near the end, so little moves).
	pos := len(x.rows)
	for pos > 0 && x.rows[pos-1].Received.After(r.Received) {
		pos--
	}
	x.rows = slices.Insert(x.rows, pos, r)
	for i := pos; i < len(x.rows); i++ {
		x.byID[x.rows[i].ID] = i
	}
	x.history(&x.rows[pos])
	x.fixtures.feed(&x.rows[pos])
	if rec.Verdict == "PASS" && !rec.Golden && len(rec.Outliers) == 0 {
		x.pop.feed(r.Board, rec.Limits, rec.Received)
	}
	return &x.rows[pos], true
}

// boardFault says a failed step is the board's own fault, which no fixture causes: its
// identity (MAC, serial), its PHY (its id, its loopback), the station refusing it (a
// duplicate MAC, a board for repair).
func boardFault(rec *record, step string) bool {
	for _, b := range rec.Steps {
		if b.ID == step {
			return b.Type == "identity" || b.Type == "phy" || b.Type == "station"
		}
	}
	return false
}

// history keeps each serial's reports in the order the board started them: the first
// carries the yields' flags (First, and FinalPass from the latest), and each its attempt
// number, renumbered when an older attempt arrives late (a spooled FAIL after the
// retest's PASS is attempt 1, and first-pass yield counts it).
func (x *index) history(r *row) {
	mac, err := plan.NormalizeMAC(r.MAC)
	if err != nil {
		mac = r.MAC
	}
	k := histKey{r.Board, r.Serial, mac}
	ids := x.serials[k]
	before := func(a, b *row) bool {
		if !a.Started.Equal(b.Started) {
			return a.Started.Before(b.Started)
		}
		return a.Received.Before(b.Received)
	}
	pos := len(ids)
	for pos > 0 && before(r, &x.rows[x.byID[ids[pos-1]]]) {
		pos--
	}
	ids = slices.Insert(ids, pos, r.ID)
	x.serials[k] = ids
	last := x.rows[x.byID[ids[len(ids)-1]]].Verdict == "PASS"
	for i, id := range ids {
		h := &x.rows[x.byID[id]]
		h.Attempt, h.First, h.FinalPass = i+1, i == 0, i == 0 && last
	}
}

// attempt is a report's attempt in its serial's history as the index orders it (0:
// not indexed).
func (x *index) attempt(id string) int {
	if i, ok := x.byID[id]; ok {
		return x.rows[i].Attempt
	}
	return 0
}

// filterRows are the rows a query selects, oldest first, as pointers into rows: the
// caller holds the index's read lock while it reads them. Every table of the page and
// every feed takes the same selection.
func filterRows(rows []row, q map[string]string) []*row {
	out := make([]*row, 0, len(rows)/8)
	if !filtering(q) {
		out = make([]*row, len(rows))
		for i := range rows {
			out[i] = &rows[i]
		}
		return out
	}
	t := strings.ToLower(q["q"])
	from, to := int32(0), int32(math.MaxInt32)
	if d, err := time.ParseInLocation("2006-01-02", q["from"], time.Local); err == nil {
		from = dayOf(d)
	}
	if d, err := time.ParseInLocation("2006-01-02", q["to"], time.Local); err == nil {
		to = dayOf(d)
	}
	for i := range rows {
		x := &rows[i]
		if b := q["board"]; b != "" && x.Board != b {
			continue
		}
		if v := q["verdict"]; v != "" && !strings.EqualFold(x.Verdict, v) {
			continue
		}
		if f := q["fixture"]; f != "" && x.Fixture != f {
			continue
		}
		if q["duplicate"] != "" && !x.Dup {
			continue
		}
		if q["retest"] != "" && x.Attempt < 2 {
			continue
		}
		if t != "" && !strings.Contains(strings.ToLower(x.Serial+" "+x.MAC+" "+x.ID+" "+x.Board+" "+x.Fixture), t) {
			continue
		}
		// from and to are days (YYYY-MM-DD, the station's local time), both included.
		if x.Day < from || x.Day > to || !matchTrace(&x.Trace, q) {
			continue
		}
		out = append(out, x)
	}
	return out
}

// filtering says whether the query selects anything less than every row.
func filtering(q map[string]string) bool {
	for _, v := range q {
		if v != "" {
			return true
		}
	}
	return false
}

// refresh reads what the store has after the index's cursor.
func (s *Server) refresh() error {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	recs, next, err := s.store.recordsAfter(s.idx.cursor)
	if err != nil {
		return err
	}
	s.idx.cursor = next
	for i := range recs {
		s.take(&recs[i])
	}
	return nil
}

// take adds a record to the index (under its lock): the metrics and the alarms follow.
func (s *Server) take(rec *record) {
	r, ok := s.idx.add(rec)
	if !ok {
		return
	}
	s.observe(rec)
	if al := s.idx.alarms.feed(r); al != nil {
		s.log.Printf("ALARM %s: %s", al.ID, al.Text)
	}
}

// takeLocked takes a record in under the index's lock.
func (s *Server) takeLocked(rec *record) {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	s.take(rec)
}

// alarmList is the alarms raised, read under the index's lock.
func (s *Server) alarmList() []Alarm {
	s.idx.mu.RLock()
	defer s.idx.mu.RUnlock()
	return s.idx.alarms.list()
}

// ackLocked clears an acknowledged alarm under the index's lock.
func (s *Server) ackLocked(a Ack) {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	s.idx.alarms.ack(a)
}

// withView runs fn over the rows a query selects (after a refresh) and how many the
// index holds, under the index's read lock: fn must not keep the rows. The lock goes
// however fn ends, a panic included, so no request can leave the station locked.
func (s *Server) withView(q map[string]string, fn func(rows []*row, total int)) error {
	if err := s.refresh(); err != nil {
		return err
	}
	s.idx.mu.RLock()
	defer s.idx.mu.RUnlock()
	fn(filterRows(s.idx.rows, q), len(s.idx.rows))
	return nil
}
