// Package station is the line's side of factory validation: it receives the boards'
// reports over HTTP, checks and stores them durably (bbolt: one file, pure Go, every
// write a synced transaction), and serves the boards' page, the reports as JSON and
// JUnit, and Prometheus metrics. It is built into the amd64 linerate only: the board
// images do not carry it.
package station

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/zynqnet/linerate/validate"
	bolt "go.etcd.io/bbolt"
)

var (
	bucketReports = []byte("reports") // id -> report JSON
	bucketOrder   = []byte("order")   // received time + id -> id
	bucketMeta    = []byte("meta")    // id -> Meta JSON: who posted it, from where
	bucketSums    = []byte("sums")    // id -> record JSON: what the page, the list and the metrics need
)

// record is a report's summary as stored: the list's Summary and, for the metrics, its
// steps in brief. The page and a restart read these, never the whole reports.
type record struct {
	Summary
	Steps []brief `json:"steps"`
}

type brief struct {
	ID   string   `json:"id"`
	Type string   `json:"type"`
	Pass bool     `json:"pass"`
	Mbps *float64 `json:"mbps,omitempty"`
}

func recordOf(r *validate.Report, received time.Time, meta Meta) record {
	rec := record{Summary: Summary{ID: r.ID, Board: r.Board, Model: r.Model, Serial: r.Serial, MAC: r.MAC, Verdict: r.Verdict,
		Failed: r.Failed, Figures: r.Figures, Started: r.Started, Seconds: r.Seconds, Received: received.UTC(), Sweeps: sweepSteps(r.Steps), Meta: meta}}
	dir := map[string]string{} // TCP iperf3 step id -> direction, from the plan
	if r.Plan != nil {
		for _, ps := range r.Plan.Steps {
			if ps.Type == "iperf3" && (ps.Protocol == "tcp" || ps.Protocol == "") {
				dir[ps.ID] = ps.Direction
			}
		}
	}
	sum, n := map[string]float64{}, map[string]int{}
	for _, st := range r.Steps {
		b := brief{ID: st.ID, Type: st.Type, Pass: st.Pass}
		if v, ok := st.Measured["mbps"]; ok && st.Type == "iperf3" {
			b.Mbps = &v
			if d, ok := dir[st.ID]; ok && (d == "up" || d == "down") {
				sum[d] += v
				n[d]++
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

// Meta is what the station recorded of a report's arrival.
func (s *Store) Meta(id string) Meta {
	var m Meta
	s.db.View(func(tx *bolt.Tx) error {
		json.Unmarshal(tx.Bucket(bucketMeta).Get([]byte(id)), &m)
		return nil
	})
	return m
}

// Meta is what the station knows of a report beyond its body: the name of the token it
// was posted with ("" without authentication) and the address it came from.
type Meta struct {
	PostedBy string `json:"posted_by,omitempty"`
	Remote   string `json:"remote,omitempty"`
}

// Store keeps reports in a bbolt file.
type Store struct {
	db *bolt.DB
}

// Open opens (or creates) the store in dir.
func Open(dir string) (*Store, error) {
	db, err := bolt.Open(filepath.Join(dir, "station.db"), 0o644, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w (another station running on it?)", filepath.Join(dir, "station.db"), err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketReports, bucketOrder, bucketMeta, bucketSums} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return backfill(tx)
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db}, nil
}

// backfill writes the summary record of every report stored before there were records
// (a store of an older station), in the transaction that opens the store.
func backfill(tx *bolt.Tx) error {
	rb, sb, mb := tx.Bucket(bucketReports), tx.Bucket(bucketSums), tx.Bucket(bucketMeta)
	return tx.Bucket(bucketOrder).ForEach(func(k, id []byte) error {
		if sb.Get(id) != nil {
			return nil
		}
		var r validate.Report
		if json.Unmarshal(rb.Get(id), &r) != nil {
			return nil // not a report this station reads: left out of the list, as before
		}
		recv, _ := time.Parse("20060102T150405.000000000Z", string(k[:len(k)-len(id)-1]))
		var m Meta
		json.Unmarshal(mb.Get(id), &m)
		b, err := json.Marshal(recordOf(&r, recv, m))
		if err != nil {
			return err
		}
		return sb.Put(id, b)
	})
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// ErrExists is returned by Put for a report stored already with the same body (a board
// re-sending a report whose answer it lost); ErrConflict for an id stored with another.
var (
	ErrExists   = errors.New("report already stored")
	ErrConflict = errors.New("another report is stored under this id")
)

// Put stores a checked report, its body and meta in one transaction: all or nothing.
// An id is written once: what is stored is never overwritten.
func (s *Store) Put(r *validate.Report, body []byte, received time.Time, meta Meta) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketReports)
		if old := rb.Get([]byte(r.ID)); old != nil {
			if bytes.Equal(old, body) {
				return ErrExists
			}
			return ErrConflict
		}
		if err := rb.Put([]byte(r.ID), body); err != nil {
			return err
		}
		m, _ := json.Marshal(meta)
		if err := tx.Bucket(bucketMeta).Put([]byte(r.ID), m); err != nil {
			return err
		}
		rec, err := json.Marshal(recordOf(r, received, meta))
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketSums).Put([]byte(r.ID), rec); err != nil {
			return err
		}
		key := []byte(received.UTC().Format("20060102T150405.000000000Z") + " " + r.ID)
		return tx.Bucket(bucketOrder).Put(key, []byte(r.ID))
	})
}

// ErrNotFound is Get's answer for an id that is not stored.
var ErrNotFound = errors.New("no such report")

// Get returns a stored report's JSON.
func (s *Store) Get(id string) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketReports).Get([]byte(id)); v != nil {
			out = append([]byte{}, v...)
		}
		return nil
	})
	if err == nil && out == nil {
		err = ErrNotFound
	}
	return out, err
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
	// "down"), Mbit/s, the mean of the TCP iperf3 steps of that direction. UDP steps run
	// at a set rate and are left out.
	TCP map[string]float64 `json:"tcp_mbps,omitempty"`
	Meta
}

// List returns every report's summary, oldest first, from the summary records.
func (s *Store) List() ([]Summary, error) { return summaries(s.records()) }

// summaries are the records' summaries (both stores list through it).
func summaries(recs []record, err error) ([]Summary, error) {
	out := make([]Summary, len(recs))
	for i := range recs {
		out[i] = recs[i].Summary
	}
	return out, err
}

// records are the stored summary records, oldest first.
func (s *Store) records() ([]record, error) {
	var out []record
	err := s.db.View(func(tx *bolt.Tx) error {
		sb := tx.Bucket(bucketSums)
		return tx.Bucket(bucketOrder).ForEach(func(k, id []byte) error {
			var rec record
			if json.Unmarshal(sb.Get(id), &rec) != nil {
				return nil // a report this station cannot read: never fail the page
			}
			out = append(out, rec)
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Received.Before(out[j].Received) })
	return out, err
}

func sweepSteps(steps []validate.StepResult) []string {
	var ids []string
	for _, st := range steps {
		if st.Type == "sweep" && len(st.Detail) > 0 {
			ids = append(ids, st.ID)
		}
	}
	return ids
}
