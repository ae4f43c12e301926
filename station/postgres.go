package station

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/zynqnet/linerate/plan"
)

// PGStore keeps reports in PostgreSQL, so that any number of stations on a line share
// one history: each writes its reports in a transaction, every station lists them all.
type PGStore struct {
	pool *pgxpool.Pool
}

// pgMigrations are the schema's versions, applied in order once each (the version is
// kept in linerate_schema); a station finding a newer schema than it knows refuses it.
var pgMigrations = []string{
	// 1: reports, their summary records and who posted them.
	`CREATE TABLE linerate_reports (
		id        text PRIMARY KEY,
		body      bytea NOT NULL,
		received  timestamptz NOT NULL,
		summary   jsonb NOT NULL,
		posted_by text NOT NULL DEFAULT '',
		remote    text NOT NULL DEFAULT ''
	);
	CREATE INDEX linerate_reports_received ON linerate_reports (received, id);`,
	// 2: the line's history: the order stored (seq), the columns the attempts and the
	// duplicate MACs are found by, the summaries' attempts of the reports stored so far,
	// and the operators' acknowledgements of alarms.
	`ALTER TABLE linerate_reports ADD COLUMN seq bigserial, ADD COLUMN board text NOT NULL DEFAULT '',
		ADD COLUMN serial text NOT NULL DEFAULT '', ADD COLUMN mac text NOT NULL DEFAULT '';
	UPDATE linerate_reports SET board = summary->>'board', serial = summary->>'serial', mac = lower(summary->>'mac');
	UPDATE linerate_reports r SET summary = jsonb_set(r.summary, '{attempt}', to_jsonb(x.n))
		FROM (SELECT id, row_number() OVER (PARTITION BY board, serial ORDER BY received, id) AS n FROM linerate_reports) x WHERE r.id = x.id;
	CREATE UNIQUE INDEX linerate_reports_seq ON linerate_reports (seq);
	CREATE INDEX linerate_reports_serial ON linerate_reports (board, serial);
	CREATE INDEX linerate_reports_mac ON linerate_reports (mac);
	CREATE TABLE linerate_acks (alarm text PRIMARY KEY, by_whom text NOT NULL, at timestamptz NOT NULL);`,
	// 3: the retest rules' facts (each report's verdict and fixture), every MAC of every
	// report (each port's) for the duplicate check; the MACs are then written in
	// plan.NormalizeMAC's form (pgNormalizeMACs).
	`ALTER TABLE linerate_reports ADD COLUMN verdict text NOT NULL DEFAULT '', ADD COLUMN fixture text NOT NULL DEFAULT '';
	UPDATE linerate_reports SET verdict = coalesce(summary->>'verdict', ''), fixture = coalesce(summary->>'fixture', '');
	CREATE TABLE linerate_macs (mac text NOT NULL, board text NOT NULL, serial text NOT NULL, report text NOT NULL, received timestamptz NOT NULL);
	CREATE INDEX linerate_macs_mac ON linerate_macs (mac);`,
}

// pgAfter are Go steps of a migration, run after its SQL (by the migration's number).
var pgAfter = map[int]func(ctx context.Context, tx pgx.Tx) error{3: pgNormalizeMACs}

// pgNormalizeMACs writes every stored report's MAC in plan.NormalizeMAC's form and
// indexes it in linerate_macs (a store from before every port's MAC was checked: the
// first port's only).
func pgNormalizeMACs(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT id, mac, board, serial, received FROM linerate_reports`)
	if err != nil {
		return err
	}
	type row struct {
		id, mac, board, serial string
		received               time.Time
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.mac, &r.board, &r.serial, &r.received); err != nil {
			rows.Close()
			return err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range all {
		k := macKey(r.mac)
		if _, err := tx.Exec(ctx, `UPDATE linerate_reports SET mac = $1 WHERE id = $2`, k, r.id); err != nil {
			return err
		}
		if k == "" {
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO linerate_macs (mac, board, serial, report, received) VALUES ($1, $2, $3, $4, $5)`, k, r.board, r.serial, r.id, r.received); err != nil {
			return err
		}
	}
	return nil
}

// OpenPG connects to the database of conn (postgres://... or key=value) and brings its
// schema up to date under an advisory lock, so stations starting together migrate once.
func OpenPG(ctx context.Context, conn string) (*PGStore, error) {
	cfg, err := pgxpool.ParseConfig(conn)
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	s := &PGStore{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func (s *PGStore) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One station at a time: the others wait here, then find the schema current.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7340196)`); err != nil {
			return fmt.Errorf("database: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS linerate_schema (version int NOT NULL)`); err != nil {
			return fmt.Errorf("database: %w", err)
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM linerate_schema`).Scan(&v)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if _, err := tx.Exec(ctx, `INSERT INTO linerate_schema VALUES (0)`); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("database: %w", err)
		}
		if v > len(pgMigrations) {
			return fmt.Errorf("database schema version %d is newer than this station's %d: update linerate", v, len(pgMigrations))
		}
		for ; v < len(pgMigrations); v++ {
			if _, err := tx.Exec(ctx, pgMigrations[v]); err != nil {
				return fmt.Errorf("database schema version %d: %w", v+1, err)
			}
			if after := pgAfter[v+1]; after != nil {
				if err := after(ctx, tx); err != nil {
					return fmt.Errorf("database schema version %d: %w", v+1, err)
				}
			}
		}
		_, err = tx.Exec(ctx, `UPDATE linerate_schema SET version = $1`, v)
		return err
	})
}

// Close closes the connections.
func (s *PGStore) Close() error { s.pool.Close(); return nil }

func pgCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// Put stores the report in one transaction; an id is written once. The board's history
// is read under advisory locks on its serial and each of its MACs (taken in one order,
// so two stations never wait on each other), so that two stations storing reports of
// one MAC or one serial at once take turns and the second sees the first.
func (s *PGStore) Put(r *plan.Report, body []byte, received time.Time, meta Meta, rules Rules) (Stored, error) {
	ctx, cancel := pgCtx()
	defer cancel()
	macs := reportMACs(r)
	var st Stored
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		locks := append([]string{"serial:" + r.Board + "\t" + r.Serial}, sortedMACLocks(macs)...)
		for _, l := range locks {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, l); err != nil {
				return err
			}
		}
		if err := pgExisting(ctx, tx, r.ID, body); err != nil {
			return err
		}
		h, uses, err := pgHistory(ctx, tx, r.Board, r.Serial, macs)
		if err != nil {
			return err
		}
		if st, err = decide(r, meta.Fixture, h, uses, rules); err != nil {
			return err
		}
		meta.Flags = append(meta.Flags, st.Flags...)
		rec, err := json.Marshal(recordOf(r, received, meta, st))
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO linerate_reports (id, body, received, summary, posted_by, remote, board, serial, mac, verdict, fixture)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO NOTHING`,
			r.ID, body, received.UTC(), rec, meta.PostedBy, meta.Remote, r.Board, r.Serial, macKey(r.MAC), r.Verdict, meta.Fixture)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			// Another station stored this id between the check and now (its locks are
			// the same serial's): what it stored decides.
			return pgExisting(ctx, tx, r.ID, body)
		}
		for _, m := range macs {
			if _, err := tx.Exec(ctx, `INSERT INTO linerate_macs (mac, board, serial, report, received) VALUES ($1, $2, $3, $4, $5)`, m, r.Board, r.Serial, r.ID, received.UTC()); err != nil {
				return err
			}
		}
		return nil
	})
	return st, err
}

// sortedMACLocks are the advisory locks of macs, in one order.
func sortedMACLocks(macs []string) []string {
	out := make([]string, len(macs))
	for i, m := range macs {
		out[i] = "mac:" + m
	}
	slices.Sort(out)
	return out
}

// pgExisting is ErrExists when id is stored with body, ErrConflict when with another
// body, nil when it is not stored.
func pgExisting(ctx context.Context, tx pgx.Tx, id string, body []byte) error {
	var old []byte
	switch err := tx.QueryRow(ctx, `SELECT body FROM linerate_reports WHERE id = $1`, id).Scan(&old); {
	case err == nil && bytes.Equal(old, body):
		return ErrExists
	case err == nil:
		return ErrConflict
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	return nil
}

// pgHistory is the board's history before a report: its serial's reports by MAC (how
// many, how many failed, the last one's fixture and verdict), and the other serials that
// reported one of macs, each with its first report.
func pgHistory(ctx context.Context, tx pgx.Tx, board, serial string, macs []string) (serialHistory, []MACUse, error) {
	h := serialHistory{}
	rows, err := tx.Query(ctx, `SELECT mac, count(*), count(*) FILTER (WHERE verdict <> 'PASS'),
		(array_agg(fixture ORDER BY received DESC, seq DESC))[1], (array_agg(verdict ORDER BY received DESC, seq DESC))[1]
		FROM linerate_reports WHERE board = $1 AND serial = $2 GROUP BY mac`, board, serial)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var mac, verdict string
		m := &macHistory{}
		if err := rows.Scan(&mac, &m.N, &m.Fails, &m.LastFixture, &verdict); err != nil {
			rows.Close()
			return nil, nil, err
		}
		m.LastPass = verdict == "PASS"
		h[mac] = m
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	rows, err = tx.Query(ctx, `SELECT mac, board, serial, received, report FROM (SELECT DISTINCT ON (mac, board, serial) mac, board, serial, received, report
		FROM linerate_macs WHERE mac = ANY($1) AND NOT (board = $2 AND serial = $3) ORDER BY mac, board, serial, received, report) u
		ORDER BY received, report LIMIT $4`, macs, board, serial, 4*MaxMACUses)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var uses []MACUse
	for rows.Next() {
		var u MACUse
		if err := rows.Scan(&u.MAC, &u.Board, &u.Serial, &u.FirstSeen, &u.Report); err != nil {
			return nil, nil, err
		}
		u.FirstSeen = u.FirstSeen.UTC()
		uses = append(uses, u)
	}
	return h, uses, rows.Err()
}

// storable says whether id could be a stored id at all: PostgreSQL's text takes no NUL
// and no invalid UTF-8 (it answers an error, not "no rows"), and the door stores only
// SafeIDs.
func storable(id string) bool { return utf8.ValidString(id) && !strings.ContainsRune(id, 0) }

// Get returns a stored report's JSON.
func (s *PGStore) Get(id string) ([]byte, error) {
	if !storable(id) {
		return nil, ErrNotFound
	}
	ctx, cancel := pgCtx()
	defer cancel()
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT body FROM linerate_reports WHERE id = $1`, id).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	return b, err
}

// Meta is what the station recorded of a report's arrival.
func (s *PGStore) Meta(id string) Meta {
	if !storable(id) {
		return Meta{}
	}
	ctx, cancel := pgCtx()
	defer cancel()
	var m Meta
	s.pool.QueryRow(ctx, `SELECT posted_by, remote FROM linerate_reports WHERE id = $1`, id).Scan(&m.PostedBy, &m.Remote)
	return m
}

// List returns every report's summary, oldest first.
func (s *PGStore) List() ([]Summary, error) { return summaries(s.records()) }

func (s *PGStore) records() ([]record, error) {
	ctx, cancel := pgCtx()
	defer cancel()
	return pgRecords(s.pool.Query(ctx, `SELECT summary FROM linerate_reports ORDER BY received, id`))
}

func pgRecords(rows pgx.Rows, err error) ([]record, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		var rec record
		if json.Unmarshal(b, &rec) == nil {
			out = append(out, rec)
		}
	}
	return out, rows.Err()
}

// pgOverlap is how far back of its cursor a station reads again: a transaction that
// took its seq before another but committed after it would be skipped by a plain
// "seq > cursor". The caller drops the ids it has.
const pgOverlap = 1024

// recordsAfter are the records stored after cursor (a seq), in seq order, with a margin
// of pgOverlap before it.
func (s *PGStore) recordsAfter(cursor string) ([]record, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a first read of a million
	defer cancel()
	after, _ := strconv.ParseInt(cursor, 10, 64)
	rows, err := s.pool.Query(ctx, `SELECT seq, summary FROM linerate_reports WHERE seq > $1 ORDER BY seq`, max(0, after-pgOverlap))
	if err != nil {
		return nil, cursor, err
	}
	defer rows.Close()
	var out []record
	last := after
	for rows.Next() {
		var seq int64
		var b []byte
		if err := rows.Scan(&seq, &b); err != nil {
			return nil, cursor, err
		}
		last = max(last, seq)
		var rec record
		if json.Unmarshal(b, &rec) == nil {
			out = append(out, rec)
		}
	}
	return out, strconv.FormatInt(last, 10), rows.Err()
}

// summaries are the records of ids, in their order.
func (s *PGStore) summaries(ids []string) ([]record, error) {
	ctx, cancel := pgCtx()
	defer cancel()
	var keep []string
	for _, id := range ids {
		if storable(id) {
			keep = append(keep, id)
		}
	}
	recs, err := pgRecords(s.pool.Query(ctx, `SELECT summary FROM linerate_reports WHERE id = ANY($1)`, keep))
	if err != nil {
		return nil, err
	}
	byID := make(map[string]record, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	out := make([]record, 0, len(recs))
	for _, id := range keep {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// Ack records an alarm's acknowledgement (the first one stands).
func (s *PGStore) Ack(a Ack) error {
	ctx, cancel := pgCtx()
	defer cancel()
	_, err := s.pool.Exec(ctx, `INSERT INTO linerate_acks (alarm, by_whom, at) VALUES ($1, $2, $3) ON CONFLICT (alarm) DO NOTHING`, a.Alarm, a.By, a.At.UTC())
	return err
}

// Acks are the acknowledgements recorded.
func (s *PGStore) Acks() ([]Ack, error) {
	ctx, cancel := pgCtx()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT alarm, by_whom, at FROM linerate_acks ORDER BY at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Ack
	for rows.Next() {
		var a Ack
		if err := rows.Scan(&a.Alarm, &a.By, &a.At); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
