package station

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/plan"
)

// MaxReportBytes bounds a POSTed report (show and doctor of one port fit many times).
const MaxReportBytes = 4 << 20

// Server is the station's HTTP side.
type Server struct {
	store   Store
	opts    Options
	log     *log.Logger
	mux     *http.ServeMux
	reg     *prometheus.Registry
	tested  *prometheus.CounterVec
	reports *prometheus.CounterVec
	serials map[string]bool // board + serial already counted as tested (under mu)
	steps   *prometheus.CounterVec
	bytes   *prometheus.HistogramVec
	took    *prometheus.HistogramVec
	dupMACs *prometheus.CounterVec
	refused *refusals
	started time.Time
	// write and read are the tokens POST and the other requests need (nil: none).
	write, read *Tokens
	// formKey signs the page's form tokens (guard.go), drawn at start.
	formKey [32]byte
	// labels bounds the metrics' label values: the boards and step ids come from the
	// reports, so past MaxLabels of each the rest count as "other".
	mu     sync.Mutex
	labels map[string]map[string]bool
	idx    index
	live   liveBoards
	ports  ports
	boots  boots // the netboot's DHCP and TFTP events
}

// Options are how a station judges the line: what it does with a duplicate MAC, how
// many boards failing one step in a row on a fixture raise an alarm, and where /sys is
// (its ports' counters; tests give a tree).
type Options struct {
	MACPolicy    MACPolicy
	FixtureAlarm int    // default DefaultFixtureAlarm
	Sys          string // default /sys
	// Version is the station's linerate version, stored with each report it takes.
	Version string
	// Plans are the plans the line runs (nil: any); PlanPolicy what a report of
	// another plan gets.
	Plans      Plans
	PlanPolicy Policy
	// The retest rules (Rules): a board failed MaxAttempts times is for repair (0: no
	// limit); with RetestElsewhere a retest after a failure must come from another
	// fixture; RetestPolicy is what a report that breaks either gets.
	MaxAttempts     int
	RetestElsewhere bool
	RetestPolicy    Policy
	// Golden are the line's golden boards (nil: no fixture verification); a fixture is
	// verified for GoldenEvery boards and GoldenHours hours after one passes on it;
	// GoldenPolicy is what a report from an unverified fixture gets.
	Golden       Golden
	GoldenEvery  int
	GoldenHours  float64
	GoldenPolicy Policy
	// Population is how many passing boards' values each measurement's population keeps,
	// Sigmas the part-average limits' width (median +- Sigmas robust sigma), and
	// OutlierPolicy what a passing board outside them gets: marginal (Flag) or failed.
	Population    int
	Sigmas        float64
	OutlierPolicy Policy
	// Line is the line's name, the page's header; Target the tests an hour the line
	// should reach (0: none), a tile and the hour chart's target line.
	Line   string
	Target float64
}

// MaxLabels is how many distinct boards, and step ids, the metrics name; the rest are
// "other" (one report with 50,000 step ids would otherwise make /metrics 67 MB).
const MaxLabels = 64

// label is v when it is among the first MaxLabels values of kind, else "other".
func (s *Server) label(kind, v string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.labels == nil {
		s.labels = map[string]map[string]bool{}
	}
	seen := s.labels[kind]
	if seen == nil {
		seen = map[string]bool{}
		s.labels[kind] = seen
	}
	if seen[v] {
		return v
	}
	if len(seen) >= MaxLabels {
		return "other"
	}
	seen[v] = true
	return v
}

// NewServer serves store; the metrics, the index and the alarms start from what the
// store holds.
func NewServer(store Store, logger *log.Logger, opts Options) (*Server, error) {
	if opts.Sys == "" {
		opts.Sys = "/sys"
	}
	if opts.GoldenEvery <= 0 {
		opts.GoldenEvery = DefaultGoldenEvery
	}
	if opts.GoldenHours <= 0 {
		opts.GoldenHours = DefaultGoldenHours
	}
	if opts.Population <= 0 {
		opts.Population = DefaultPopulation
	}
	if opts.Sigmas <= 0 {
		opts.Sigmas = DefaultSigmas
	}
	s := &Server{store: store, opts: opts, log: logger, mux: http.NewServeMux(), reg: prometheus.NewRegistry(), started: time.Now()}
	s.ports.sys = opts.Sys
	s.registerMetrics()
	acks, err := store.Acks()
	if err != nil {
		return nil, err
	}
	s.idx = newIndex(newAlarms(opts.FixtureAlarm, acks))
	rand.Read(s.formKey[:])
	s.idx.pop.n = opts.Population
	// The index starts from the summary records, not the whole reports: a restart with
	// thousands of reports reads kilobytes each, not their show and doctor.
	if err := s.refresh(); err != nil {
		return nil, err
	}
	s.mux.HandleFunc("POST /api/reports", s.postReport)
	s.mux.HandleFunc("GET /api/reports", s.listReports)
	s.mux.HandleFunc("GET /api/reports/{id}", s.getReport)
	s.mux.HandleFunc("GET /api/reports/{id}/junit.xml", s.getJUnit)
	s.mux.HandleFunc("GET /api/reports/{id}/sweep/{step}", s.getSweepChart)
	s.mux.HandleFunc("GET /api/reports.csv", s.reportsCSV)
	s.mux.HandleFunc("GET /api/tables/{name}", s.getTable)
	s.mux.HandleFunc("POST /api/live", s.postLive)
	s.mux.HandleFunc("GET /api/live", s.getLive)
	s.mux.HandleFunc("GET /api/boots", s.getBoots)
	s.mux.HandleFunc("GET /api/alarms", s.getAlarms)
	s.mux.HandleFunc("GET /api/fixtures", s.getFixtures)
	s.mux.HandleFunc("GET /api/capability", s.getCapability)
	s.mux.HandleFunc("POST /api/alarms/{id}/ack", s.ackAlarm)
	s.mux.HandleFunc("GET /reports/{id}", s.reportPage)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("GET /{$}", s.page)
	return s, nil
}

// registerMetrics makes the station's metrics, in base units (promtool check metrics).
func (s *Server) registerMetrics() {
	s.tested = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_boards_tested_total", Help: "Boards tested, each serial once (its first report), by board type and that report's verdict."}, []string{"board", "verdict"})
	s.reports = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_reports_total", Help: "Reports received, retests included, by board type and verdict."}, []string{"board", "verdict"})
	s.steps = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_step_results_total", Help: "Step outcomes, by board type, step and result."}, []string{"board", "step", "result"})
	s.bytes = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "linerate_throughput_bytes_per_second", Help: "Measured throughput of the iperf3 steps, bytes per second.",
		Buckets: []float64{125e3, 625e3, 1.25e6, 6.25e6, 12.5e6, 25e6, 62.5e6, 100e6, 112.5e6, 116.25e6, 118.75e6, 125e6, 312.5e6, 625e6, 1.25e9}}, []string{"board", "step"})
	s.took = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "linerate_test_duration_seconds", Help: "How long a board's validation took, by board type.",
		Buckets: []float64{10, 20, 30, 45, 60, 90, 120, 180, 300, 600, 1200}}, []string{"board"})
	s.dupMACs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_duplicate_mac_reports_total", Help: "Reports whose MAC another serial reported before, by board type (stored and flagged)."}, []string{"board"})
	s.refused = newRefusals(s.log)
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "linerate_build_info", Help: "The station's linerate version and the Go it was built with; always 1."}, []string{"version", "goversion"})
	build.WithLabelValues(cmp.Or(s.opts.Version, "unknown"), runtime.Version()).Set(1)
	stored := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "linerate_reports_stored", Help: "Reports in the store."}, func() float64 {
		s.idx.mu.RLock()
		defer s.idx.mu.RUnlock()
		return float64(len(s.idx.rows))
	})
	alarms := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "linerate_alarms", Help: "Alarms raised and not cleared (fixture suspect)."}, func() float64 {
		s.idx.mu.RLock()
		defer s.idx.mu.RUnlock()
		return float64(len(s.idx.alarms.active))
	})
	inTest := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "linerate_boards_in_test", Help: "Boards that posted their start and no report yet, by state (testing, lost)."}, []string{"state"})
	s.reg.MustRegister(s.tested, s.reports, s.steps, s.bytes, s.took, s.dupMACs, s.refused.count, stored, alarms, liveCollector{s, inTest}, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// liveCollector reads the boards in test when /metrics is scraped.
type liveCollector struct {
	s *Server
	g *prometheus.GaugeVec
}

func (c liveCollector) Describe(ch chan<- *prometheus.Desc) { c.g.Describe(ch) }
func (c liveCollector) Collect(ch chan<- prometheus.Metric) {
	n := map[string]float64{"testing": 0, "lost": 0}
	for _, b := range c.s.live.list(time.Now()) {
		n[b.State]++
	}
	for k, v := range n {
		c.g.WithLabelValues(k).Set(v)
	}
	c.g.Collect(ch)
}

func (s *Server) observe(r *record) {
	board := s.label("board", r.Board)
	s.reports.WithLabelValues(board, r.Verdict).Inc()
	if s.firstSeen(r.Board + "\x00" + r.Serial) {
		s.tested.WithLabelValues(board, r.Verdict).Inc()
	}
	if len(r.DuplicateMAC) > 0 {
		s.dupMACs.WithLabelValues(board).Inc()
	}
	s.took.WithLabelValues(board).Observe(r.Seconds)
	for _, st := range r.Steps {
		res := "pass"
		if !st.Pass {
			res = "fail"
		}
		step := s.label("step", st.ID)
		s.steps.WithLabelValues(board, step, res).Inc()
		if st.Mbps != nil {
			s.bytes.WithLabelValues(board, step).Observe(*st.Mbps * 1e6 / 8)
		}
	}
}

// firstSeen says whether a board's serial is counted as tested for the first time.
func (s *Server) firstSeen(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serials == nil {
		s.serials = map[string]bool{}
	}
	first := !s.serials[key]
	s.serials[key] = true
	return first
}

// poster is who may post (a write token's name, or the address without tokens); it
// answers 401 itself, logged among the refusals (rate-limited: unauthenticated posts
// cost nothing to send).
func (s *Server) poster(w http.ResponseWriter, req *http.Request) (string, bool) {
	if !s.guard(w, req, req.URL.Path == "/api/reports" || req.URL.Path == "/api/live") {
		return "", false
	}
	if s.write == nil && s.read == nil {
		return req.RemoteAddr, true
	}
	name := ""
	if s.write != nil {
		name = s.write.Who(req)
	} else {
		name = s.read.Who(req) // a station with read tokens only: no anonymous writes
	}
	if name == "" {
		if req.URL.Path == "/api/reports" {
			s.refused.report("no-token", req.RemoteAddr, "", "", errors.New("no valid write token"))
		} else {
			s.refused.logf("%s %s refused from %s: no valid token", req.Method, req.URL.Path, req.RemoteAddr)
		}
		unauthorized(w)
		return "", false
	}
	return name + " (" + req.RemoteAddr + ")", true
}

func (s *Server) postReport(w http.ResponseWriter, req *http.Request) {
	who, ok := s.poster(w, req)
	if !ok {
		return
	}
	body, r, ok := s.readReport(w, req, who)
	if !ok {
		return
	}
	meta := Meta{Remote: req.RemoteAddr, StationVersion: s.opts.Version}
	if s.write != nil {
		meta.PostedBy = s.write.Who(req)
	}
	// The fixture is the board's word for it, else the station's port it came through;
	// that port's counters over the test, when the board posted its start, and each of
	// its ports' station port's.
	in := s.ports.portOf(req)
	meta.Fixture, meta.Golden = cmp.Or(r.Fixture, in), s.isGolden(r)
	flags, err := s.policies(r, meta.Fixture)
	if err == nil && !meta.Golden {
		meta.Outliers, err = s.outliers(r)
	}
	if err != nil {
		s.policyRefused(w, r.ID, r.Serial, who, err)
		return
	}
	meta.Flags = flags
	samples := s.live.done(r.ID)
	meta.Port = s.ports.since(samples[in])
	meta.StationPorts = s.stationPorts(r, samples)
	now := time.Now()
	st, err := s.store.Put(r, body, now, meta, Rules{MAC: s.opts.MACPolicy, MaxAttempts: s.opts.MaxAttempts, RetestElsewhere: s.opts.RetestElsewhere, Retest: s.opts.RetestPolicy})
	if err != nil {
		s.putRefused(w, r.ID, r.Serial, who, err)
		return
	}
	meta.Flags = append(meta.Flags, st.Flags...)
	// Into the index at once (a read of the store after every post would cost every
	// board's post the reports around it); other stations' come with the next read.
	rec := recordOf(r, now, meta, st)
	s.takeLocked(&rec)
	note := fmt.Sprintf("attempt %d", st.Attempt)
	if len(st.DuplicateMAC) > 0 {
		note += "; " + (&DuplicateMACError{MAC: r.MAC, Uses: st.DuplicateMAC}).Error()
	}
	s.log.Printf("report %s from %s: %s %s serial %s %s (%s, fixture %s)", r.ID, who, r.Board, r.Verdict, r.Serial, strings.Join(r.Failed, ","), note, plan.OrDash(meta.Fixture))
	w.Header().Set("Location", "/api/reports/"+r.ID)
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "report %s stored: %s\n", r.ID, note)
}

// stationPorts are the station's ports each of a multi-port report's ports came through
// (the one holding the address its plan's station gives it), with their counters over
// the test where the board posted its start.
func (s *Server) stationPorts(r *plan.Report, samples map[string]*portSample) []PortCounters {
	if r.Plan == nil || len(r.Ports) == 0 {
		return nil
	}
	var out []PortCounters
	for _, p := range r.Plan.Ports {
		name := s.ports.ifaceOf(p.Station.Address)
		pc := s.ports.since(samples[name])
		if pc == nil {
			pc = &PortCounters{Name: name}
		}
		pc.Port = p.Interface
		out = append(out, *pc)
	}
	return out
}

// policies are the flags the line's policies give a report from fixture, or the
// rejection of one.
func (s *Server) policies(r *plan.Report, fixture string) ([]ReportFlag, error) {
	var flags []ReportFlag
	for _, c := range []struct {
		p          Policy
		kind, text string
	}{{s.opts.PlanPolicy, FlagUnknownPlan, s.checkPlan(r)}, {s.opts.GoldenPolicy, FlagUnverified, s.checkFixture(r, fixture)}} {
		f, err := judge(c.p, c.kind, c.text)
		if err != nil {
			return nil, err
		}
		if f != nil {
			flags = append(flags, *f)
		}
	}
	return flags, nil
}

// policyRefused answers a report a policy rejects: 409 with the reason, counted and
// logged.
func (s *Server) policyRefused(w http.ResponseWriter, id, serial, who string, err error) {
	var pe *PolicyError
	kind := "policy"
	if errors.As(err, &pe) {
		kind = pe.Kind
	}
	s.refused.report(kind, who, id, serial, err)
	http.Error(w, "report "+id+" refused: "+err.Error(), http.StatusConflict)
}

// readReport reads a posted report's body (at most MaxReportBytes) and checks it at the
// door; it answers 400, 413 or 422 itself, each refusal counted and logged.
func (s *Server) readReport(w http.ResponseWriter, req *http.Request, who string) ([]byte, *plan.Report, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, MaxReportBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			err = fmt.Errorf("report larger than %d bytes", MaxReportBytes)
			s.refused.report("too-large", who, "", serialOf(body), err)
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return nil, nil, false
		}
		s.refused.report("unreadable", who, "", "", err)
		http.Error(w, "reading the report: "+err.Error(), http.StatusBadRequest)
		return nil, nil, false
	}
	r, err := DecodeReport(body)
	if err != nil {
		var re *RejectError
		status, reason := http.StatusBadRequest, "malformed"
		if errors.As(err, &re) {
			status = re.Status
		}
		if status == http.StatusUnprocessableEntity {
			reason = "invalid"
		}
		s.refused.report(reason, who, "", serialOf(body), err)
		http.Error(w, err.Error(), status)
		return nil, nil, false
	}
	return body, r, true
}

// putRefused answers a report the store did not take: 200 for one stored already (a
// board re-sending a report whose answer it lost), 409 for an id taken by another or a
// duplicate MAC under MACReject, 500 when the store failed.
func (s *Server) putRefused(w http.ResponseWriter, id, serial, who string, err error) {
	var dup *DuplicateMACError
	var pe *PolicyError
	switch {
	case errors.As(err, &pe):
		s.policyRefused(w, id, serial, who, err)
	case errors.Is(err, ErrExists):
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "report %s already stored\n", id)
	case errors.Is(err, ErrConflict):
		s.refused.report("id-conflict", who, id, serial, errors.New("another report is stored under its id"))
		http.Error(w, "report "+id+": another report is stored under this id; nothing was overwritten", http.StatusConflict)
	case errors.As(err, &dup):
		s.refused.report("duplicate-mac", who, id, serial, dup)
		http.Error(w, "report "+id+" refused: "+dup.Error(), http.StatusConflict)
	default:
		s.log.Printf("store report %s: %v", id, err)
		http.Error(w, "the station could not store the report: "+err.Error(), http.StatusInternalServerError)
	}
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="linerate station"`)
	http.Error(w, "a token is needed: Authorization: Bearer TOKEN (linerate validate --station-token)", http.StatusUnauthorized)
}

// RequireTokens makes POST take only the write tokens, and, with read tokens, every
// other request those (or a write token).
func (s *Server) RequireTokens(write, read *Tokens) { s.write, s.read = write, read }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.read != nil && r.Method != http.MethodPost && s.read.Who(r) == "" && (s.write == nil || s.write.Who(r) == "") {
		unauthorized(w)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func query(req *http.Request) map[string]string {
	v := req.URL.Query()
	// Every key there, "" when not asked for (the page's template reads each).
	q := map[string]string{"board": "", "verdict": "", "q": "", "fixture": "", "duplicate": "", "retest": "", "from": "", "to": ""}
	for _, k := range traceKeys {
		q[k.key] = ""
	}
	for _, k := range []string{"board", "verdict", "q", "fixture", "plan", "build", "kernel", "uboot", "operator", "station_version"} {
		if x := v.Get(k); x != "" && len(x) <= MaxText {
			q[k] = x
		}
	}
	for _, k := range []string{"duplicate", "retest"} {
		if x := v.Get(k); x == "1" || x == "true" {
			q[k] = "1"
		}
	}
	for _, k := range []string{"from", "to"} {
		if _, err := time.Parse("2006-01-02", v.Get(k)); err == nil {
			q[k] = v.Get(k)
		}
	}
	return q
}

// filtered is the summaries of the stored reports the request's query selects, oldest
// first, read from the store; it answers 500 itself.
func (s *Server) filtered(w http.ResponseWriter, req *http.Request) ([]Summary, bool) {
	list, _, ok := s.filteredPage(w, req, 0, -1)
	return list, ok
}

// filteredPage is filtered's rows from offset, at most limit of them (-1: all), and how
// many the query selects.
func (s *Server) filteredPage(w http.ResponseWriter, req *http.Request, offset, limit int) ([]Summary, int, bool) {
	var ids []string
	total := 0
	err := s.withView(query(req), func(rows []*row, _ int) {
		total = len(rows)
		if limit >= 0 {
			rows = window(rows, offset, limit)
		}
		ids = make([]string, len(rows))
		for i, x := range rows {
			ids[i] = x.ID
		}
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil, 0, false
	}
	list, err := summaries(s.store.summaries(ids))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil, 0, false
	}
	for i := range list {
		list[i].Attempt = s.attemptOf(list[i].ID, list[i].Attempt)
	}
	return list, total, true
}

// attemptOf is a report's attempt as the index orders its serial's history (by the
// time the board started each run), else stored, the order they arrived in.
func (s *Server) attemptOf(id string, stored int) int {
	s.idx.mu.RLock()
	defer s.idx.mu.RUnlock()
	if a := s.idx.attempt(id); a > 0 {
		return a
	}
	return max(stored, 1)
}

// listReports lists the reports the query selects, oldest first; ?offset=&limit= (at
// most 1,000) pages the list, and X-Total-Count says how many it selects.
func (s *Server) listReports(w http.ResponseWriter, req *http.Request) {
	offset, limit, ok := pageOf(req, -1)
	if !ok {
		http.Error(w, "offset and limit: want whole numbers (limit 1..1000)", http.StatusBadRequest)
		return
	}
	if offset > 0 && limit < 0 {
		limit = maxTablePage
	}
	list, total, ok := s.filteredPage(w, req, offset, limit)
	if !ok {
		return
	}
	if list == nil {
		list = []Summary{}
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
	writeJSON(w, list)
}

// lookup answers 404 for an unknown id.
func (s *Server) lookup(w http.ResponseWriter, req *http.Request) ([]byte, bool) {
	body, err := s.store.Get(req.PathValue("id"))
	switch {
	case errors.Is(err, ErrNotFound):
		http.Error(w, "no report "+req.PathValue("id"), http.StatusNotFound)
	case err != nil:
		s.log.Printf("read report %s: %v", req.PathValue("id"), err)
		http.Error(w, "the station could not read the store: "+err.Error(), http.StatusInternalServerError)
	}
	return body, err == nil
}

// lookupReport is the stored report decoded; it answers 404 or 500 itself.
func (s *Server) lookupReport(w http.ResponseWriter, req *http.Request) (*plan.Report, bool) {
	body, ok := s.lookup(w, req)
	if !ok {
		return nil, false
	}
	var r plan.Report
	if err := json.Unmarshal(body, &r); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil, false
	}
	return &r, true
}

// getReport serves the report as the board posted it, with what the station adds at
// the end: attempt, duplicate_mac (when flagged), fixture (when the board named none:
// the station's port), station_port (its counters over the test), received.
func (s *Server) getReport(w http.ResponseWriter, req *http.Request) {
	body, ok := s.lookup(w, req)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(s.annotated(req.PathValue("id"), body))
}

// annotated is the body with the station's fields appended to its object (the door
// refuses a report that has them, so none is given twice).
func (s *Server) annotated(id string, body []byte) []byte {
	recs, err := s.store.summaries([]string{id})
	b := bytes.TrimRight(body, " \t\r\n")
	if err != nil || len(recs) != 1 || len(b) < 2 || b[len(b)-1] != '}' {
		return body
	}
	rec := recs[0]
	add := map[string]any{"attempt": s.attemptOf(id, rec.Attempt), "received": rec.Received}
	if rec.StationVersion != "" {
		add["station_version"] = rec.StationVersion
	}
	if len(rec.Flags) > 0 {
		add["flags"] = rec.Flags
	}
	if len(rec.StationPorts) > 0 {
		add["station_ports"] = rec.StationPorts
	}
	if len(rec.Outliers) > 0 {
		add["outliers"] = rec.Outliers
	}
	if len(rec.DuplicateMAC) > 0 {
		add["duplicate_mac"] = rec.DuplicateMAC
	}
	if rec.Port != nil {
		add["station_port"] = rec.Port
	}
	var has struct {
		Fixture string `json:"fixture"`
	}
	if json.Unmarshal(body, &has) == nil && has.Fixture == "" && rec.Fixture != "" {
		add["fixture"] = rec.Fixture
	}
	extra, err := json.Marshal(add)
	if err != nil {
		return body
	}
	out := append([]byte{}, b[:len(b)-1]...)
	if len(bytes.TrimSpace(out)) > 1 {
		out = append(out, ',')
	}
	return append(append(out, extra[1:]...), '\n')
}

func (s *Server) getJUnit(w http.ResponseWriter, req *http.Request) {
	r, ok := s.lookupReport(w, req)
	if !ok {
		return
	}
	x, err := r.JUnit()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Write(x)
}

// getSweepChart draws a report's sweep step (GET .../sweep/STEP.svg) as linerate sweep
// --svg draws it on the board.
func (s *Server) getSweepChart(w http.ResponseWriter, req *http.Request) {
	r, ok := s.lookupReport(w, req)
	if !ok {
		return
	}
	id := strings.TrimSuffix(req.PathValue("step"), ".svg")
	for _, st := range r.Steps {
		if st.ID != id || st.Type != "sweep" {
			continue
		}
		var res curve.Result
		if err := json.Unmarshal(st.Detail, &res); err != nil || len(res.Points) == 0 {
			http.Error(w, "step "+id+" has no sweep to draw", http.StatusNotFound)
			return
		}
		var b bytes.Buffer
		res.WriteSVG(&b)
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Write(b.Bytes())
		return
	}
	http.Error(w, "report "+r.ID+" has no sweep step "+id, http.StatusNotFound)
}

func (s *Server) getAlarms(w http.ResponseWriter, req *http.Request) {
	if err := s.refresh(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, s.alarmList())
}

// getFixtures serves each fixture's golden verification.
func (s *Server) getFixtures(w http.ResponseWriter, req *http.Request) {
	var list []fixtureState
	err := s.withView(map[string]string{}, func([]*row, int) { list = s.fixtureList(time.Now()) })
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if list == nil {
		list = []fixtureState{}
	}
	writeJSON(w, list)
}

// ackAlarm is an operator's acknowledgement (POST with a write token when the station
// has tokens): the alarm is cleared, and stays cleared on every station of the store.
func (s *Server) ackAlarm(w http.ResponseWriter, req *http.Request) {
	who, ok := s.poster(w, req)
	if !ok {
		return
	}
	if fromBrowser(req) && req.Header.Get("Authorization") == "" && !s.formTokenOK(req) {
		s.refuseWrite(req, "no-form-token", "a browser's acknowledgement without the page's form token")
		http.Error(w, "acknowledge from the station's page (its form token is missing or not this session's), or with a token", http.StatusForbidden)
		return
	}
	id := req.PathValue("id")
	if !SafeID(id) {
		http.Error(w, "no alarm "+id, http.StatusNotFound)
		return
	}
	if err := s.refresh(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	known := slices.ContainsFunc(s.alarmList(), func(a Alarm) bool { return a.ID == id })
	if !known {
		http.Error(w, "no alarm "+id+" is raised", http.StatusNotFound)
		return
	}
	a := Ack{Alarm: id, By: who, At: time.Now().UTC()}
	if err := s.store.Ack(a); err != nil {
		http.Error(w, "the station could not record it: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.ackLocked(a)
	s.log.Printf("alarm %s acknowledged by %s", id, who)
	if strings.Contains(req.Header.Get("Accept"), "text/html") {
		http.Redirect(w, req, "/", http.StatusSeeOther)
		return
	}
	writeJSON(w, a)
}
