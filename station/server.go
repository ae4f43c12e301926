package station

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/validate"
)

// MaxReportBytes bounds a POSTed report (show and doctor of one port fit many times).
const MaxReportBytes = 4 << 20

// Server is the station's HTTP side.
type Server struct {
	store   *Store
	log     *log.Logger
	mux     *http.ServeMux
	reg     *prometheus.Registry
	tested  *prometheus.CounterVec
	steps   *prometheus.CounterVec
	mbps    *prometheus.HistogramVec
	stored  prometheus.GaugeFunc
	count   atomic.Int64 // reports stored; handlers run concurrently
	started time.Time
}

// NewServer serves store; the metrics start from what the store holds.
func NewServer(store *Store, logger *log.Logger) (*Server, error) {
	s := &Server{store: store, log: logger, mux: http.NewServeMux(), reg: prometheus.NewRegistry(), started: time.Now()}
	s.tested = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_boards_tested_total", Help: "Reports received, by board type and verdict."}, []string{"board", "verdict"})
	s.steps = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_step_results_total", Help: "Step outcomes, by board type, step and result."}, []string{"board", "step", "result"})
	s.mbps = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "linerate_throughput_mbps", Help: "Measured throughput of the iperf3 steps, Mbit/s.",
		Buckets: []float64{1, 5, 10, 50, 100, 200, 500, 800, 900, 930, 950, 1000, 2500, 5000, 10000}}, []string{"board", "step"})
	s.stored = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "linerate_reports_stored", Help: "Reports in the store."}, func() float64 { return float64(s.count.Load()) })
	s.reg.MustRegister(s.tested, s.steps, s.mbps, s.stored)
	list, err := store.List()
	if err != nil {
		return nil, err
	}
	for _, sum := range list {
		if body, ok := store.Get(sum.ID); ok {
			var r validate.Report
			if json.Unmarshal(body, &r) == nil {
				s.observe(&r)
			}
		}
	}
	s.mux.HandleFunc("POST /api/reports", s.postReport)
	s.mux.HandleFunc("GET /api/reports", s.listReports)
	s.mux.HandleFunc("GET /api/reports/{id}", s.getReport)
	s.mux.HandleFunc("GET /api/reports/{id}/junit.xml", s.getJUnit)
	s.mux.HandleFunc("GET /api/reports/{id}/sweep/{step}", s.getSweepChart)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("GET /{$}", s.page)
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) observe(r *validate.Report) {
	s.count.Add(1)
	s.tested.WithLabelValues(r.Board, r.Verdict).Inc()
	for _, st := range r.Steps {
		res := "pass"
		if !st.Pass {
			res = "fail"
		}
		s.steps.WithLabelValues(r.Board, st.ID, res).Inc()
		if st.Type == "iperf3" {
			if v, ok := st.Measured["mbps"]; ok {
				s.mbps.WithLabelValues(r.Board, st.ID).Observe(v)
			}
		}
	}
}

// DecodeReport reads and checks a report body: strict JSON, one document, a known
// schema, the fields the station needs. It is what POST /api/reports runs.
func DecodeReport(body []byte) (*validate.Report, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var r validate.Report
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("not a report: %v", err)
	}
	if dec.More() {
		return nil, errors.New("not a report: data after the JSON document")
	}
	if err := r.Check(); err != nil {
		return nil, fmt.Errorf("bad report: %v", err)
	}
	return &r, nil
}

func (s *Server) postReport(w http.ResponseWriter, req *http.Request) {
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
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch err := s.store.Put(r, body, time.Now()); {
	case errors.Is(err, ErrExists):
		// A board re-sending a report whose answer it lost: it is here, all is well.
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "report %s already stored\n", r.ID)
		return
	case err != nil:
		s.log.Printf("store report %s: %v", r.ID, err)
		http.Error(w, "the station could not store the report: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.observe(r)
	s.log.Printf("report %s: %s %s serial %s %s", r.ID, r.Board, r.Verdict, r.Serial, strings.Join(r.Failed, ","))
	w.Header().Set("Location", "/api/reports/"+r.ID)
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "report %s stored\n", r.ID)
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
		out = append(out, x)
	}
	return out
}

func query(req *http.Request) map[string]string {
	return map[string]string{"board": req.URL.Query().Get("board"), "verdict": req.URL.Query().Get("verdict"), "q": req.URL.Query().Get("q")}
}

func (s *Server) listReports(w http.ResponseWriter, req *http.Request) {
	list, err := s.store.List()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	list = filter(list, query(req))
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
	body, ok := s.store.Get(req.PathValue("id"))
	if !ok {
		http.Error(w, "no report "+req.PathValue("id"), http.StatusNotFound)
	}
	return body, ok
}

func (s *Server) getReport(w http.ResponseWriter, req *http.Request) {
	if body, ok := s.lookup(w, req); ok {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}
}

func (s *Server) getJUnit(w http.ResponseWriter, req *http.Request) {
	body, ok := s.lookup(w, req)
	if !ok {
		return
	}
	var r validate.Report
	if err := json.Unmarshal(body, &r); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
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
	body, ok := s.lookup(w, req)
	if !ok {
		return
	}
	var r validate.Report
	if err := json.Unmarshal(body, &r); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	id := strings.TrimSuffix(req.PathValue("step"), ".svg")
	for _, st := range r.Steps {
		if st.ID != id || st.Type != "sweep" {
			continue
		}
		var res experiment.Result
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

// throughput is a report's headline figure for the chart: the mean of its *_mbps
// figures (the iperf3 steps), link speed aside.
func throughput(f map[string]float64) (float64, bool) {
	var sum float64
	n := 0
	for k, v := range f {
		if strings.HasSuffix(k, "_mbps") && k != "speed_mbps" && !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
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
