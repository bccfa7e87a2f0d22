package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // registers the "sqlite" database/sql driver
)

// Dialect names the database engine.
type Dialect string

// Dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is the API database. It is safe for concurrent use.
type DB struct {
	sql     *sql.DB
	dialect Dialect
	desc    string
}

// Open opens the database at rawURL and applies the schema migrations.
// An empty rawURL is SQLite in {dataDir}/vigia.db; "postgres://" and
// "postgresql://" URLs are PostgreSQL; "sqlite:PATH" (or "sqlite://PATH") is
// SQLite in PATH.
func Open(ctx context.Context, rawURL, dataDir string) (*DB, error) {
	d, err := open(rawURL, dataDir)
	if err != nil {
		return nil, err
	}
	if err := d.migrate(ctx); err != nil {
		_ = d.sql.Close()
		return nil, err
	}
	return d, nil
}

func open(rawURL, dataDir string) (*DB, error) {
	switch {
	case rawURL == "" || strings.HasPrefix(rawURL, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite:"), "//")
		if path == "" {
			path = filepath.Join(dataDir, "vigia.db")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, fmt.Errorf("database: %w", err)
		}
		dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"
		s, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("database: %w", err)
		}
		// One writer at a time keeps SQLite free of SQLITE_BUSY surprises.
		s.SetMaxOpenConns(1)
		return &DB{sql: s, dialect: SQLite, desc: "sqlite:" + path}, nil
	case strings.HasPrefix(rawURL, "postgres://") || strings.HasPrefix(rawURL, "postgresql://"):
		s, err := sql.Open("pgx", rawURL)
		if err != nil {
			return nil, fmt.Errorf("database: %w", err)
		}
		s.SetMaxOpenConns(16)
		s.SetConnMaxIdleTime(5 * time.Minute)
		return &DB{sql: s, dialect: Postgres, desc: redact(rawURL)}, nil
	}
	return nil, fmt.Errorf("database: %w: %q (want postgres://, postgresql:// or sqlite:)", ErrURL, redact(rawURL))
}

// redact drops the password of a URL.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable url)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Dialect returns the engine in use.
func (d *DB) Dialect() Dialect { return d.dialect }

// Describe names the database without credentials.
func (d *DB) Describe() string { return d.desc }

// Ping checks that the database answers.
func (d *DB) Ping(ctx context.Context) error { return d.sql.PingContext(ctx) }

// Close closes the database.
func (d *DB) Close() error { return d.sql.Close() }

// q rewrites the ? placeholders of query for the dialect.
func (d *DB) q(query string) string {
	if d.dialect != Postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

func (d *DB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := d.sql.ExecContext(ctx, d.q(query), args...)
	return res, classify(err)
}

func (d *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return d.sql.QueryRowContext(ctx, d.q(query), args...)
}

func (d *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := d.sql.QueryContext(ctx, d.q(query), args...)
	return rows, classify(err)
}

// insert runs an INSERT ... RETURNING id and returns the id.
func (d *DB) insert(ctx context.Context, query string, args ...any) (int64, error) {
	var id int64
	err := d.queryRow(ctx, query+" RETURNING id", args...).Scan(&id)
	return id, classify(err)
}

// classify maps unique violations to ErrDuplicate and no rows to ErrNotFound.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23505" {
		return fmt.Errorf("%w: %s", ErrDuplicate, pg.ConstraintName)
	}
	if strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return fmt.Errorf("%w: %w", ErrDuplicate, err)
	}
	return err
}

// boolInt stores a bool as 0 or 1 (the same column type in both engines).
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
