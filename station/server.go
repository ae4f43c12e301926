package station

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/plan"
)

// MaxReportBytes bounds a POSTed report (show and doctor of one port fit many times).
const MaxReportBytes = 4 << 20

// Server is the station's HTTP side.
type Server struct {
	store   Store
	log     *log.Logger
	mux     *http.ServeMux
	reg     *prometheus.Registry
	tested  *prometheus.CounterVec
	reports *prometheus.CounterVec
	serials map[string]bool // board + serial already counted as tested (under mu)
	steps   *prometheus.CounterVec
	mbps    *prometheus.HistogramVec
	stored  prometheus.GaugeFunc
	count   atomic.Int64 // reports stored; handlers run concurrently
	started time.Time
	// write and read are the tokens POST and the other requests need (nil: none).
	write, read *Tokens
	// labels bounds the metrics' label values: the boards and step ids come from the
	// reports, so past MaxLabels of each the rest count as "other".
	mu     sync.Mutex
	labels map[string]map[string]bool
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

// NewServer serves store; the metrics start from what the store holds.
func NewServer(store Store, logger *log.Logger) (*Server, error) {
	s := &Server{store: store, log: logger, mux: http.NewServeMux(), reg: prometheus.NewRegistry(), started: time.Now()}
	s.tested = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_boards_tested_total", Help: "Boards tested, each serial once (its first report), by board type and that report's verdict."}, []string{"board", "verdict"})
	s.reports = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_reports_total", Help: "Reports received, retests included, by board type and verdict."}, []string{"board", "verdict"})
	s.steps = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_step_results_total", Help: "Step outcomes, by board type, step and result."}, []string{"board", "step", "result"})
	s.mbps = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "linerate_throughput_bits_per_second", Help: "Measured throughput of the iperf3 steps, bit/s.",
		Buckets: []float64{1e6, 5e6, 10e6, 50e6, 100e6, 200e6, 500e6, 800e6, 900e6, 930e6, 950e6, 1e9, 2.5e9, 5e9, 10e9}}, []string{"board", "step"})
	s.stored = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "linerate_reports_stored", Help: "Reports in the store."}, func() float64 { return float64(s.count.Load()) })
	s.reg.MustRegister(s.tested, s.reports, s.steps, s.mbps, s.stored)
	// The metrics start from the summary records, not the whole reports: a restart
	// with thousands of reports reads kilobytes each, not their show and doctor.
	recs, err := store.records()
	if err != nil {
		return nil, err
	}
	for i := range recs {
		s.observe(&recs[i])
	}
	s.mux.HandleFunc("POST /api/reports", s.postReport)
	s.mux.HandleFunc("GET /api/reports", s.listReports)
	s.mux.HandleFunc("GET /api/reports/{id}", s.getReport)
	s.mux.HandleFunc("GET /api/reports/{id}/junit.xml", s.getJUnit)
	s.mux.HandleFunc("GET /api/reports/{id}/sweep/{step}", s.getSweepChart)
	s.mux.HandleFunc("GET /api/reports.csv", s.reportsCSV)
	s.mux.HandleFunc("GET /reports/{id}", s.reportPage)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("GET /{$}", s.page)
	return s, nil
}

func (s *Server) observe(r *record) {
	s.count.Add(1)
	board := s.label("board", r.Board)
	s.reports.WithLabelValues(board, r.Verdict).Inc()
	s.mu.Lock()
	first := !s.serials[r.Board+"\x00"+r.Serial]
	if s.serials == nil {
		s.serials = map[string]bool{}
	}
	s.serials[r.Board+"\x00"+r.Serial] = true
	s.mu.Unlock()
	if first {
		s.tested.WithLabelValues(board, r.Verdict).Inc()
	}
	for _, st := range r.Steps {
		res := "pass"
		if !st.Pass {
			res = "fail"
		}
		step := s.label("step", st.ID)
		s.steps.WithLabelValues(board, step, res).Inc()
		if st.Mbps != nil {
			s.mbps.WithLabelValues(board, step).Observe(*st.Mbps * 1e6)
		}
	}
}

func (s *Server) postReport(w http.ResponseWriter, req *http.Request) {
	meta := Meta{Remote: req.RemoteAddr}
	if s.write != nil {
		if meta.PostedBy = s.write.Who(req); meta.PostedBy == "" {
			s.log.Printf("report refused from %s: no valid token", req.RemoteAddr)
			unauthorized(w)
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, MaxReportBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			http.Error(w, fmt.Sprintf("report larger than %d bytes", MaxReportBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the report: "+err.Error(), http.StatusBadRequest)
		return
	}
	r, err := DecodeReport(body)
	if err != nil {
		var re *RejectError
		status := http.StatusBadRequest
		if errors.As(err, &re) {
			status = re.Status
		}
		http.Error(w, err.Error(), status)
		return
	}
	who := meta.Remote
	if meta.PostedBy != "" {
		who = meta.PostedBy + " (" + meta.Remote + ")"
	}
	now := time.Now()
	switch err := s.store.Put(r, body, now, meta); {
	case errors.Is(err, ErrExists):
		// A board re-sending a report whose answer it lost: it is here, all is well.
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "report %s already stored\n", r.ID)
		return
	case errors.Is(err, ErrConflict):
		s.log.Printf("report %s from %s refused: another report is stored under its id", r.ID, who)
		http.Error(w, "report "+r.ID+": another report is stored under this id; nothing was overwritten", http.StatusConflict)
		return
	case err != nil:
		s.log.Printf("store report %s: %v", r.ID, err)
		http.Error(w, "the station could not store the report: "+err.Error(), http.StatusInternalServerError)
		return
	}
	rec := recordOf(r, now, meta)
	s.observe(&rec)
	s.log.Printf("report %s from %s: %s %s serial %s %s", r.ID, who, r.Board, r.Verdict, r.Serial, strings.Join(r.Failed, ","))
	w.Header().Set("Location", "/api/reports/"+r.ID)
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "report %s stored\n", r.ID)
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

func filter(list []Summary, q map[string]string) []Summary {
	var out []Summary
	for _, x := range list {
		if b := q["board"]; b != "" && x.Board != b {
			continue
		}
		if v := q["verdict"]; v != "" && !strings.EqualFold(x.Verdict, v) {
			continue
		}
		if t := strings.ToLower(q["q"]); t != "" && !strings.Contains(strings.ToLower(x.Serial+" "+x.MAC+" "+x.ID+" "+x.Board), t) {
			continue
		}
		// from and to are days (YYYY-MM-DD, the station's local time), both included.
		day := x.Received.Local().Format("2006-01-02")
		if f := q["from"]; f != "" && day < f {
			continue
		}
		if t := q["to"]; t != "" && day > t {
			continue
		}
		out = append(out, x)
	}
	return out
}

func query(req *http.Request) map[string]string {
	v := req.URL.Query()
	q := map[string]string{"board": v.Get("board"), "verdict": v.Get("verdict"), "q": v.Get("q")}
	for _, k := range []string{"from", "to"} {
		if _, err := time.Parse("2006-01-02", v.Get(k)); err == nil {
			q[k] = v.Get(k)
		}
	}
	return q
}

// filtered is the stored reports the request's query selects; it answers 500 itself.
func (s *Server) filtered(w http.ResponseWriter, req *http.Request) ([]Summary, bool) {
	list, err := s.store.List()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil, false
	}
	return filter(list, query(req)), true
}

func (s *Server) listReports(w http.ResponseWriter, req *http.Request) {
	list, ok := s.filtered(w, req)
	if !ok {
		return
	}
	if list == nil {
		list = []Summary{}
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(list)
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

func (s *Server) getReport(w http.ResponseWriter, req *http.Request) {
	if body, ok := s.lookup(w, req); ok {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}
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

func boardsOf(list []Summary) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range list {
		if !seen[x.Board] {
			seen[x.Board] = true
			out = append(out, x.Board)
		}
	}
	sort.Strings(out)
	return out
}
