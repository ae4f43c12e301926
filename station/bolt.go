package station

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/zynqnet/linerate/plan"
	bolt "go.etcd.io/bbolt"
)

var (
	bucketReports = []byte("reports") // id -> report JSON
	bucketOrder   = []byte("order")   // received time + id -> id
	bucketMeta    = []byte("meta")    // id -> Meta JSON: who posted it, from where
	bucketSums    = []byte("sums")    // id -> record JSON: what the page, the list and the metrics need
)

// Meta is what the station recorded of a report's arrival.
func (s *BoltStore) Meta(id string) Meta {
	var m Meta
	s.db.View(func(tx *bolt.Tx) error {
		json.Unmarshal(tx.Bucket(bucketMeta).Get([]byte(id)), &m)
		return nil
	})
	return m
}

// BoltStore keeps reports in a bbolt file: one file, pure Go, every write a synced
// transaction; one station on one PC.
type BoltStore struct {
	db *bolt.DB
}

// OpenBolt opens (or creates) the store in dir.
func OpenBolt(dir string) (*BoltStore, error) {
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
	return &BoltStore{db: db}, nil
}

// backfill writes the summary record of every report stored before there were records
// (a store of an older station), in the transaction that opens the store.
func backfill(tx *bolt.Tx) error {
	rb, sb, mb := tx.Bucket(bucketReports), tx.Bucket(bucketSums), tx.Bucket(bucketMeta)
	return tx.Bucket(bucketOrder).ForEach(func(k, id []byte) error {
		if sb.Get(id) != nil {
			return nil
		}
		var r plan.Report
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
func (s *BoltStore) Close() error { return s.db.Close() }

// Put stores a checked report, its body and meta in one transaction: all or nothing.
// An id is written once: what is stored is never overwritten.
func (s *BoltStore) Put(r *plan.Report, body []byte, received time.Time, meta Meta) error {
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

// Get returns a stored report's JSON.
func (s *BoltStore) Get(id string) ([]byte, error) {
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

// List returns every report's summary, oldest first, from the summary records.
func (s *BoltStore) List() ([]Summary, error) { return summaries(s.records()) }

// records are the stored summary records, oldest first.
func (s *BoltStore) records() ([]record, error) {
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
