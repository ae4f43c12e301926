package station

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Put stores the report in one transaction; an id is written once.
func (s *PGStore) Put(r *plan.Report, body []byte, received time.Time, meta Meta) error {
	ctx, cancel := pgCtx()
	defer cancel()
	rec, err := json.Marshal(recordOf(r, received, meta))
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO linerate_reports (id, body, received, summary, posted_by, remote) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO NOTHING`, r.ID, body, received.UTC(), rec, meta.PostedBy, meta.Remote)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			return nil
		}
		var old []byte
		if err := tx.QueryRow(ctx, `SELECT body FROM linerate_reports WHERE id = $1`, r.ID).Scan(&old); err != nil {
			return err
		}
		if bytes.Equal(old, body) {
			return ErrExists
		}
		return ErrConflict
	})
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
	rows, err := s.pool.Query(ctx, `SELECT summary FROM linerate_reports ORDER BY received, id`)
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
