// Package station is the line's side of factory validation: it receives the boards'
// reports over HTTP, checks and stores them durably (bbolt: one file, pure Go, every
// write a synced transaction), and serves the boards' page, the reports as JSON and
// JUnit, and Prometheus metrics. It is built into the amd64 linerate only: the board
// images do not carry it.
package station

import (
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
)

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
		for _, b := range [][]byte{bucketReports, bucketOrder} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// ErrExists is returned by Put for a report id already stored.
var ErrExists = errors.New("report already stored")

// Put stores a checked report and its body in one transaction: both or neither.
func (s *Store) Put(r *validate.Report, body []byte, received time.Time) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketReports)
		if rb.Get([]byte(r.ID)) != nil {
			return ErrExists
		}
		if err := rb.Put([]byte(r.ID), body); err != nil {
			return err
		}
		key := []byte(received.UTC().Format("20060102T150405.000000000Z") + " " + r.ID)
		return tx.Bucket(bucketOrder).Put(key, []byte(r.ID))
	})
}

// Get returns a stored report's JSON.
func (s *Store) Get(id string) ([]byte, bool) {
	var out []byte
	s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketReports).Get([]byte(id)); v != nil {
			out = append([]byte{}, v...)
		}
		return nil
	})
	return out, out != nil
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
}

// List returns every report's summary, oldest first.
func (s *Store) List() ([]Summary, error) {
	var out []Summary
	err := s.db.View(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketReports)
		return tx.Bucket(bucketOrder).ForEach(func(k, id []byte) error {
			var r validate.Report
			if err := json.Unmarshal(rb.Get(id), &r); err != nil {
				return nil // stored before a schema change; skip, never fail the page
			}
			recv, _ := time.Parse("20060102T150405.000000000Z", string(k[:len(k)-len(id)-1]))
			out = append(out, Summary{ID: r.ID, Board: r.Board, Model: r.Model, Serial: r.Serial, MAC: r.MAC, Verdict: r.Verdict,
				Failed: r.Failed, Figures: r.Figures, Started: r.Started, Seconds: r.Seconds, Received: recv, Sweeps: sweepSteps(r.Steps)})
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
