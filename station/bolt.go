package station

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/zynqnet/linerate/plan"
	bolt "go.etcd.io/bbolt"
)

var (
	bucketReports = []byte("reports") // id -> report JSON
	bucketOrder   = []byte("order")   // received time + id -> id
	bucketMeta    = []byte("meta")    // id -> Meta JSON: who posted it, from where
	bucketSums    = []byte("sums")    // id -> record JSON: what the page, the list and the metrics need
	bucketSerials = []byte("serials") // board NUL serial -> how many reports (attempts)
	bucketMACs    = []byte("macs")    // MAC -> JSON []MACUse: every serial that reported it, first seen
	bucketAcks    = []byte("acks")    // alarm -> Ack JSON
	bucketSeq     = []byte("seq")     // 8-byte sequence, in commit order -> id: what a station reads after its cursor
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
		// A store of a station before the line's history: its reports are counted in
		// (attempts, MACs) once, in the order they came.
		history := tx.Bucket(bucketSerials) == nil
		seq := tx.Bucket(bucketSeq) == nil
		for _, b := range [][]byte{bucketReports, bucketOrder, bucketMeta, bucketSums, bucketSerials, bucketMACs, bucketAcks, bucketSeq} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		if err := backfill(tx); err != nil {
			return err
		}
		if seq {
			// The reports of an older store in their arrival order.
			if err := tx.Bucket(bucketOrder).ForEach(func(_, id []byte) error { return putSeq(tx, id) }); err != nil {
				return err
			}
		}
		if history {
			return backfillHistory(tx)
		}
		return nil
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
		b, err := json.Marshal(recordOf(&r, recv, m, Stored{}))
		if err != nil {
			return err
		}
		return sb.Put(id, b)
	})
}

// backfillHistory counts the stored reports into the attempts and MACs, oldest first,
// and writes each summary's attempt and duplicates as a station would have.
func backfillHistory(tx *bolt.Tx) error {
	sb := tx.Bucket(bucketSums)
	return tx.Bucket(bucketOrder).ForEach(func(_, id []byte) error {
		var rec record
		if json.Unmarshal(sb.Get(id), &rec) != nil {
			return nil
		}
		st, err := boltHistory(tx, rec.Board, rec.Serial, rec.MAC)
		if err != nil {
			return err
		}
		if err := boltRecord(tx, rec.ID, rec.Board, rec.Serial, rec.MAC, rec.Received); err != nil {
			return err
		}
		rec.Attempt, rec.DuplicateMAC = st.Attempt, st.DuplicateMAC
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return sb.Put(id, b)
	})
}

// boltHistory is what the store knows of a board before a report of it: the attempt
// this report is, and the other serials that reported its MAC.
func boltHistory(tx *bolt.Tx, board, serial, mac string) (Stored, error) {
	n, _ := strconv.Atoi(string(tx.Bucket(bucketSerials).Get([]byte(serialKey(board, serial)))))
	st := Stored{Attempt: n + 1}
	if k := macKey(mac); k != "" {
		var uses []MACUse
		json.Unmarshal(tx.Bucket(bucketMACs).Get([]byte(k)), &uses)
		for _, u := range uses {
			if (u.Board != board || u.Serial != serial) && len(st.DuplicateMAC) < MaxMACUses {
				st.DuplicateMAC = append(st.DuplicateMAC, u)
			}
		}
	}
	return st, nil
}

// boltRecord counts a stored report into the attempts and the MACs.
func boltRecord(tx *bolt.Tx, id, board, serial, mac string, received time.Time) error {
	sk := []byte(serialKey(board, serial))
	n, _ := strconv.Atoi(string(tx.Bucket(bucketSerials).Get(sk)))
	if err := tx.Bucket(bucketSerials).Put(sk, []byte(strconv.Itoa(n+1))); err != nil {
		return err
	}
	k := macKey(mac)
	if k == "" {
		return nil
	}
	mb := tx.Bucket(bucketMACs)
	var uses []MACUse
	json.Unmarshal(mb.Get([]byte(k)), &uses)
	if len(uses) >= 4*MaxMACUses || slices.ContainsFunc(uses, func(u MACUse) bool { return u.Board == board && u.Serial == serial }) {
		return nil // known, or a placeholder's list long enough to flag every next board
	}
	b, err := json.Marshal(append(uses, MACUse{Board: board, Serial: serial, FirstSeen: received.UTC(), Report: id}))
	if err != nil {
		return err
	}
	return mb.Put([]byte(k), b)
}

// Close closes the file.
func (s *BoltStore) Close() error { return s.db.Close() }

// Put stores a checked report, its body and meta in one transaction: all or nothing.
// An id is written once: what is stored is never overwritten.
func (s *BoltStore) Put(r *plan.Report, body []byte, received time.Time, meta Meta, policy MACPolicy) (Stored, error) {
	var st Stored
	err := s.db.Update(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketReports)
		if old := rb.Get([]byte(r.ID)); old != nil {
			if bytes.Equal(old, body) {
				return ErrExists
			}
			return ErrConflict
		}
		var err error
		if st, err = boltHistory(tx, r.Board, r.Serial, r.MAC); err != nil {
			return err
		}
		if policy == MACReject && len(st.DuplicateMAC) > 0 {
			return &DuplicateMACError{MAC: r.MAC, Uses: st.DuplicateMAC}
		}
		if err := boltRecord(tx, r.ID, r.Board, r.Serial, r.MAC, received); err != nil {
			return err
		}
		if err := rb.Put([]byte(r.ID), body); err != nil {
			return err
		}
		m, _ := json.Marshal(meta)
		if err := tx.Bucket(bucketMeta).Put([]byte(r.ID), m); err != nil {
			return err
		}
		rec, err := json.Marshal(recordOf(r, received, meta, st))
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketSums).Put([]byte(r.ID), rec); err != nil {
			return err
		}
		key := []byte(received.UTC().Format("20060102T150405.000000000Z") + " " + r.ID)
		if err := tx.Bucket(bucketOrder).Put(key, []byte(r.ID)); err != nil {
			return err
		}
		return putSeq(tx, []byte(r.ID))
	})
	return st, err
}

// putSeq gives a stored report the next sequence number: bbolt has one writer at a
// time, so the sequence is the order of the commits, and a station reading after its
// cursor misses none (a time key would: a report received earlier may commit later).
func putSeq(tx *bolt.Tx, id []byte) error {
	b := tx.Bucket(bucketSeq)
	n, err := b.NextSequence()
	if err != nil {
		return err
	}
	return b.Put(binary.BigEndian.AppendUint64(nil, n), id)
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
	out, _, err := s.recordsAfter("")
	sort.SliceStable(out, func(i, j int) bool { return out[i].Received.Before(out[j].Received) })
	return out, err
}

// recordsAfter are the records after cursor (a sequence number) in the order they were
// committed.
func (s *BoltStore) recordsAfter(cursor string) ([]record, string, error) {
	var out []record
	next := cursor
	err := s.db.View(func(tx *bolt.Tx) error {
		sb := tx.Bucket(bucketSums)
		c := tx.Bucket(bucketSeq).Cursor()
		k, id := c.First()
		if n, err := strconv.ParseUint(cursor, 10, 64); err == nil {
			k, id = c.Seek(binary.BigEndian.AppendUint64(nil, n+1))
		}
		for ; k != nil; k, id = c.Next() {
			next = strconv.FormatUint(binary.BigEndian.Uint64(k), 10)
			var rec record
			if json.Unmarshal(sb.Get(id), &rec) != nil {
				continue // a report this station cannot read: never fail the page
			}
			out = append(out, rec)
		}
		return nil
	})
	return out, next, err
}

// summaries are the records of ids, in their order (ids not stored left out).
func (s *BoltStore) summaries(ids []string) ([]record, error) {
	var out []record
	err := s.db.View(func(tx *bolt.Tx) error {
		sb := tx.Bucket(bucketSums)
		for _, id := range ids {
			var rec record
			if json.Unmarshal(sb.Get([]byte(id)), &rec) == nil {
				out = append(out, rec)
			}
		}
		return nil
	})
	return out, err
}

// Ack records an alarm's acknowledgement.
func (s *BoltStore) Ack(a Ack) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketAcks).Put([]byte(a.Alarm), b) })
}

// Acks are the acknowledgements recorded.
func (s *BoltStore) Acks() ([]Ack, error) {
	var out []Ack
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAcks).ForEach(func(_, v []byte) error {
			var a Ack
			if json.Unmarshal(v, &a) == nil {
				out = append(out, a)
			}
			return nil
		})
	})
	return out, err
}
