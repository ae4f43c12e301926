// Package station is the line's side of factory validation: it receives the boards'
// reports over HTTP, checks and stores them durably, and serves the boards' page, the
// reports as JSON and JUnit, and Prometheus metrics. It is built into the amd64 linerate
// only: the board images do not carry it. It reads reports through package plan and
// draws sweeps through package curve, both leaves: nothing of the board's measuring
// code comes in.
package station

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// Store is where a station keeps its reports: a bbolt file on one PC (BoltStore), or
// PostgreSQL shared by every station of a line (PGStore). Both pass one conformance
// suite (store_test.go).
type Store interface {
	// Put stores a checked report, its body and meta in one transaction; ErrExists for
	// the same id and body again, ErrConflict for the same id with another body. It
	// says what it found of the board's history (the attempt, the other serials with one
	// of its MACs, its failures) and the flags the line's rules give it, which the stored
	// summary carries too; a report the rules refuse (a duplicate MAC under MACReject, a
	// board for repair under reject) is a *DuplicateMACError or *PolicyError and is not
	// stored. Stations on one database see each other's reports in this.
	Put(r *plan.Report, body []byte, received time.Time, meta Meta, rules Rules) (Stored, error)
	// Get returns a report's JSON; ErrNotFound for an id not stored, another error when
	// the store cannot answer.
	Get(id string) ([]byte, error)
	// List returns every report's summary, oldest first.
	List() ([]Summary, error)
	// Meta is what the station recorded of a report's arrival (zero when unknown).
	Meta(id string) Meta
	Close() error
	// records are the summary records, oldest first: the page, the list and the
	// metrics read these, never the whole reports.
	records() ([]record, error)
	// recordsAfter are the summary records stored after cursor ("" for all), in the
	// order they were stored, and the cursor after them: how a station keeps its view
	// of the store in step, other stations' reports included.
	recordsAfter(cursor string) ([]record, string, error)
	// summaries are the summary records of ids (those stored), in the order of ids.
	summaries(ids []string) ([]record, error)
	// Ack records an operator's acknowledgement of an alarm; Acks are all of them.
	Ack(a Ack) error
	Acks() ([]Ack, error)
}

// Ack is an operator's acknowledgement of an alarm.
type Ack struct {
	Alarm string    `json:"alarm"`
	By    string    `json:"by"`
	At    time.Time `json:"at"`
}

// OpenStore opens the store the configuration names: PostgreSQL when db is given
// (postgres://USER@HOST/DB or key=value settings), else the bbolt file in dir (created).
// It returns the store and a word for the log.
func OpenStore(ctx context.Context, dir, db string) (Store, string, error) {
	if db != "" {
		pg, err := OpenPG(ctx, db)
		if err != nil {
			return nil, "", err
		}
		return pg, "PostgreSQL", nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	bb, err := OpenBolt(dir)
	if err != nil {
		return nil, "", err
	}
	return bb, dir, nil
}

// ErrExists is returned by Put for a report stored already with the same body (a board
// re-sending a report whose answer it lost); ErrConflict for an id stored with another.
var (
	ErrExists   = errors.New("report already stored")
	ErrConflict = errors.New("another report is stored under this id")
)

// ErrNotFound is Get's answer for an id that is not stored.
var ErrNotFound = errors.New("no such report")

// Meta is what the station knows of a report beyond its body: the name of the token it
// was posted with ("" without authentication), the address it came from, the fixture
// (the board's word for it, else the station's port the report came through) and that
// port's error counters over the board's test.
type Meta struct {
	PostedBy string        `json:"posted_by,omitempty"`
	Remote   string        `json:"remote,omitempty"`
	Fixture  string        `json:"fixture,omitempty"`
	Port     *PortCounters `json:"station_port,omitempty"`
	// StationPorts are the station's ports a multi-port report's ports came through, each
	// naming the board's port, with its counters over the test.
	StationPorts []PortCounters `json:"station_ports,omitempty"`
	// StationVersion is the linerate of the station that took the report.
	StationVersion string `json:"station_version,omitempty"`
	// Flags are the line's rules the report broke, as the station's policies flagged it.
	Flags []ReportFlag `json:"flags,omitempty"`
	// Golden says a golden board made it (kept out of the yield; it verifies its
	// fixture).
	Golden bool `json:"golden,omitempty"`
	// Outliers are its measurements outside their population's limits (it passed as
	// marginal for them).
	Outliers []Outlier `json:"outliers,omitempty"`
}

// Summary is a report as the list and the page show it.
type Summary struct {
	ID       string             `json:"id"`
	Board    string             `json:"board"`
	Model    string             `json:"model,omitempty"`
	Serial   string             `json:"serial"`
	MAC      string             `json:"mac"`
	Verdict  string             `json:"verdict"`
	Failed   []string           `json:"failed"`
	Figures  map[string]float64 `json:"figures"`
	Started  time.Time          `json:"started"`
	Seconds  float64            `json:"seconds"`
	Received time.Time          `json:"received"`
	// Sweeps are the ids of the report's sweep steps (each a chart).
	Sweeps []string `json:"sweeps,omitempty"`
	// TCP is the TCP throughput measured in each direction ("up": the board sent,
	// "down"), Mbit/s, the mean of the TCP iperf3 steps of that direction; a multi-port
	// report has each port's too ("up.eth0"). UDP steps run at a set rate and are left
	// out.
	TCP map[string]float64 `json:"tcp_mbps,omitempty"`
	// Ports are the verdicts port by port of a multi-port report.
	Ports []PortVerdict `json:"ports,omitempty"`
	// Marginal are the measurements in their marginal bands (plan.FigureName).
	Marginal []string `json:"marginal,omitempty"`

	// What produced it: the plan's hash, the image, the kernel, the U-Boot, the operator.
	PlanSHA256 string      `json:"plan_sha256,omitempty"`
	Build      *plan.Build `json:"build,omitempty"`
	Kernel     string      `json:"kernel,omitempty"`
	UBoot      string      `json:"uboot,omitempty"`
	Operator   string      `json:"operator,omitempty"`
	// Attempt and DuplicateMAC are the board's history when the report came (Stored).
	Attempt      int      `json:"attempt"`
	DuplicateMAC []MACUse `json:"duplicate_mac,omitempty"`
	Meta
}

// PortVerdict is one port's verdict in a summary.
type PortVerdict struct {
	Interface string   `json:"interface"`
	Verdict   string   `json:"verdict"`
	Failed    []string `json:"failed,omitempty"`
}

// record is a report's summary as stored: the list's Summary and, for the metrics, its
// steps in brief. The page and a restart read these, never the whole reports.
type record struct {
	Summary
	Steps []brief `json:"steps"`
	// Limits are its measurements that have a limit: the population's values.
	Limits []limitValue `json:"limits,omitempty"`
}

type brief struct {
	ID      string   `json:"id"`
	Type    string   `json:"type"`
	Pass    bool     `json:"pass"`
	Mbps    *float64 `json:"mbps,omitempty"`
	Seconds float64  `json:"seconds"`
}

func recordOf(r *plan.Report, received time.Time, meta Meta, st Stored) record {
	if meta.Fixture == "" {
		meta.Fixture = r.Fixture
	}
	rec := record{Summary: Summary{ID: r.ID, Board: r.Board, Model: r.Model, Serial: r.Serial, MAC: r.MAC, Verdict: r.Verdict,
		Failed: r.Failed, Marginal: r.Marginal, PlanSHA256: r.PlanSHA256, Build: r.Build, Kernel: r.Kernel, UBoot: r.UBoot, Operator: r.Operator,
		Figures: r.Figures, Started: r.Started, Seconds: r.Seconds, Received: received.UTC(), Sweeps: sweepSteps(r.Steps),
		Attempt: st.Attempt, DuplicateMAC: st.DuplicateMAC, Meta: meta}}
	for _, p := range r.Ports {
		rec.Ports = append(rec.Ports, PortVerdict{Interface: p.Interface, Verdict: p.Verdict, Failed: p.Failed})
	}
	rec.Limits = limitValues(r)
	for _, o := range meta.Outliers {
		if !slices.Contains(rec.Marginal, o.Measurement) {
			rec.Marginal = append(slices.Clone(rec.Marginal), o.Measurement)
		}
	}
	dir := map[string]string{} // TCP iperf3 step id -> direction, from the plan
	if r.Plan != nil {
		for _, ps := range r.Plan.Steps {
			var f struct{ Protocol, Direction string }
			if ps.Type == "iperf3" && ps.Decode(&f) == nil && (f.Protocol == "tcp" || f.Protocol == "") {
				dir[ps.ID] = f.Direction
			}
		}
	}
	sum, n := map[string]float64{}, map[string]int{}
	for _, st := range r.Steps {
		b := brief{ID: st.ID, Type: st.Type, Pass: st.Pass, Seconds: st.Seconds}
		if v, ok := st.Measured["mbps"]; ok && st.Type == "iperf3" {
			b.Mbps = &v
			// A multi-port report's steps are the plan's step per port (tcp-up.eth0):
			// the board's figure is the mean over its ports, each port's its own
			// (up.eth0), so the chart draws a line per port.
			planID := st.ID
			if st.Port != "" {
				planID = strings.TrimSuffix(st.ID, "."+st.Port)
			}
			if d, ok := dir[planID]; ok && (d == "up" || d == "down") {
				sum[d] += v
				n[d]++
				if st.Port != "" {
					sum[d+"."+st.Port] += v
					n[d+"."+st.Port]++
				}
			}
		}
		rec.Steps = append(rec.Steps, b)
	}
	for d := range sum {
		if rec.TCP == nil {
			rec.TCP = map[string]float64{}
		}
		rec.TCP[d] = sum[d] / float64(n[d])
	}
	return rec
}

// summaries are the records' summaries (both stores list through it).
func summaries(recs []record, err error) ([]Summary, error) {
	out := make([]Summary, len(recs))
	for i := range recs {
		out[i] = recs[i].Summary
	}
	return out, err
}

func sweepSteps(steps []plan.StepResult) []string {
	var ids []string
	for _, st := range steps {
		if st.Type == "sweep" && len(st.Detail) > 0 {
			ids = append(ids, st.ID)
		}
	}
	return ids
}
