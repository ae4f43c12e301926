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
	bucketSerials = []byte("serials") // board NUL serial -> how many reports (an older store's attempts; no longer read)
	bucketHistory = []byte("history") // board NUL serial -> JSON serialHistory: its reports by MAC
	bucketMACs    = []byte("macs")    // MAC (plan.NormalizeMAC) -> JSON []MACUse: every serial that reported it, first seen
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
		// A store of a station before the line's history (by MAC, with the retest rules'
		// facts): its reports are counted in once, in the order they came.
		history := tx.Bucket(bucketHistory) == nil
		seq := tx.Bucket(bucketSeq) == nil
		for _, b := range [][]byte{bucketReports, bucketOrder, bucketMeta, bucketSums, bucketSerials, bucketHistory, bucketMACs, bucketAcks, bucketSeq} {
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

// backfillHistory counts the stored reports into the boards' histories and the MACs,
// oldest first (the MACs written as plan.NormalizeMAC writes them), and writes each
// summary's attempt and duplicates as a station would have.
func backfillHistory(tx *bolt.Tx) error {
	mb := tx.Bucket(bucketMACs)
	var old [][]byte
	mb.ForEach(func(k, _ []byte) error { old = append(old, append([]byte{}, k...)); return nil })
	for _, k := range old {
		mb.Delete(k)
	}
	sb := tx.Bucket(bucketSums)
	return tx.Bucket(bucketOrder).ForEach(func(_, id []byte) error {
		var rec record
		if json.Unmarshal(sb.Get(id), &rec) != nil {
			return nil
		}
		h, uses := boltHistory(tx, rec.Board, rec.Serial, []string{macKey(rec.MAC)})
		st, _ := decide(&plan.Report{Serial: rec.Serial, MAC: rec.MAC}, rec.Fixture, h, uses, Rules{})
		if err := boltRecord(tx, rec.ID, rec.Board, rec.Serial, []string{macKey(rec.MAC)}, rec.Received, h, rec.MAC, rec.Verdict, rec.Fixture); err != nil {
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

// boltHistory is what the store knows of a board before a report of it: its serial's
// history, and the other serials that reported any of macs.
func boltHistory(tx *bolt.Tx, board, serial string, macs []string) (serialHistory, []MACUse) {
	h := serialHistory{}
	json.Unmarshal(tx.Bucket(bucketHistory).Get([]byte(serialKey(board, serial))), &h)
	var dups []MACUse
	for _, k := range macs {
		if k == "" {
			continue
		}
		var uses []MACUse
		json.Unmarshal(tx.Bucket(bucketMACs).Get([]byte(k)), &uses)
		for _, u := range uses {
			if u.Board != board || u.Serial != serial {
				u.MAC = k
				dups = append(dups, u)
			}
		}
	}
	return h, dups
}

// boltRecord counts a stored report into its serial's history h and its MACs' uses.
func boltRecord(tx *bolt.Tx, id, board, serial string, macs []string, received time.Time, h serialHistory, mac, verdict, fixture string) error {
	h.count(mac, verdict, fixture)
	hb, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketHistory).Put([]byte(serialKey(board, serial)), hb); err != nil {
		return err
	}
	mb := tx.Bucket(bucketMACs)
	for _, k := range macs {
		if k == "" {
			continue
		}
		var uses []MACUse
		json.Unmarshal(mb.Get([]byte(k)), &uses)
		if len(uses) >= 4*MaxMACUses || slices.ContainsFunc(uses, func(u MACUse) bool { return u.Board == board && u.Serial == serial }) {
			continue // known, or a placeholder's list long enough to flag every next board
		}
		b, err := json.Marshal(append(uses, MACUse{Board: board, Serial: serial, FirstSeen: received.UTC(), Report: id}))
		if err != nil {
			return err
		}
		if err := mb.Put([]byte(k), b); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the file.
func (s *BoltStore) Close() error { return s.db.Close() }

// Put stores a checked report, its body and meta in one transaction: all or nothing.
// An id is written once: what is stored is never overwritten.
func (s *BoltStore) Put(r *plan.Report, body []byte, received time.Time, meta Meta, rules Rules) (Stored, error) {
	var st Stored
	err := s.db.Update(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketReports)
		if old := rb.Get([]byte(r.ID)); old != nil {
			if bytes.Equal(old, body) {
				return ErrExists
			}
			return ErrConflict
		}
		macs := reportMACs(r)
		h, uses := boltHistory(tx, r.Board, r.Serial, macs)
		var err error
		if st, err = decide(r, meta.Fixture, h, uses, rules); err != nil {
			return err
		}
		meta.Flags = append(meta.Flags, st.Flags...)
		if err := boltRecord(tx, r.ID, r.Board, r.Serial, macs, received, h, r.MAC, r.Verdict, meta.Fixture); err != nil {
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
