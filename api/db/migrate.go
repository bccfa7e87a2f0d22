package db

import (
	"context"
	"fmt"
	"strings"
)

// migrations are applied in order, each once, in a transaction. {{id}} is
// the auto-increment primary key of the dialect. Never edit an applied
// migration: add a new one.
var migrations = []string{
	// 1: the first schema.
	`CREATE TABLE clients (
		id {{id}},
		name TEXT NOT NULL,
		document_type INTEGER NOT NULL,
		document_number TEXT NOT NULL UNIQUE,
		phone TEXT NOT NULL,
		cep TEXT NOT NULL,
		address TEXT NOT NULL,
		address_number TEXT NOT NULL,
		address_comp TEXT NOT NULL DEFAULT '',
		address_nh TEXT NOT NULL,
		city TEXT NOT NULL,
		state TEXT NOT NULL,
		create_url TEXT NOT NULL DEFAULT '',
		create_ip TEXT NOT NULL DEFAULT '',
		blocked INTEGER NOT NULL DEFAULT 0,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE TABLE users (
		id {{id}},
		client_id BIGINT NOT NULL REFERENCES clients(id),
		user_type INTEGER NOT NULL,
		name TEXT NOT NULL,
		email TEXT NOT NULL UNIQUE,
		phone TEXT NOT NULL,
		password_hash TEXT NOT NULL,
		blocked INTEGER NOT NULL DEFAULT 0,
		update_user_id BIGINT NOT NULL DEFAULT 0,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE TABLE user_tokens (
		id {{id}},
		user_id BIGINT NOT NULL REFERENCES users(id),
		token_hash TEXT NOT NULL UNIQUE,
		created_at BIGINT NOT NULL
	);
	CREATE TABLE cameras (
		id {{id}},
		client_id BIGINT NOT NULL REFERENCES clients(id),
		description TEXT NOT NULL,
		camera_address TEXT NOT NULL,
		latitude TEXT NOT NULL,
		longitude TEXT NOT NULL,
		connection_type INTEGER NOT NULL,
		resolution_id INTEGER NOT NULL,
		history_days INTEGER NOT NULL,
		channel INTEGER NOT NULL DEFAULT 0,
		model_id INTEGER NOT NULL DEFAULT 0,
		dns TEXT NOT NULL DEFAULT '',
		port TEXT NOT NULL DEFAULT '',
		cam_user TEXT NOT NULL DEFAULT '',
		stream TEXT NOT NULL DEFAULT '',
		sealed_url TEXT NOT NULL DEFAULT '',
		p2p_serial TEXT NOT NULL DEFAULT '',
		sealed_p2p_password TEXT NOT NULL DEFAULT '',
		sound INTEGER NOT NULL DEFAULT 0,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE INDEX cameras_client ON cameras (client_id, id);
	CREATE TABLE videos (
		id {{id}},
		camera_id BIGINT NOT NULL,
		client_id BIGINT NOT NULL,
		description TEXT NOT NULL,
		start_ms BIGINT NOT NULL,
		end_ms BIGINT NOT NULL,
		status INTEGER NOT NULL DEFAULT 0,
		create_user_id BIGINT NOT NULL DEFAULT 0,
		update_user_id BIGINT NOT NULL DEFAULT 0,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE INDEX videos_client ON videos (client_id, id);
	CREATE TABLE events (
		id {{id}},
		event_uid TEXT NOT NULL UNIQUE,
		camera_id BIGINT NOT NULL,
		client_id BIGINT NOT NULL,
		event_type INTEGER NOT NULL,
		event_at BIGINT NOT NULL,
		image_key TEXT NOT NULL DEFAULT '',
		created_at BIGINT NOT NULL
	);
	CREATE INDEX events_time ON events (event_at, id);
	CREATE INDEX events_client_time ON events (client_id, event_at);`,
	// 2: access generations, counted up by each block and unblock, so the
	// digests signed over them change.
	`ALTER TABLE clients ADD COLUMN access_gen BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE users ADD COLUMN access_gen BIGINT NOT NULL DEFAULT 0;`,
	// 3: why a downloadable video failed.
	`ALTER TABLE videos ADD COLUMN error TEXT NOT NULL DEFAULT '';`,
	// 4: legal holds, with who placed and lifted them, when and why.
	`CREATE TABLE holds (
		id {{id}},
		camera_id BIGINT NOT NULL DEFAULT 0,
		video_id BIGINT NOT NULL DEFAULT 0,
		start_ms BIGINT NOT NULL DEFAULT 0,
		end_ms BIGINT NOT NULL DEFAULT 0,
		reason TEXT NOT NULL,
		placed_by TEXT NOT NULL,
		placed_at BIGINT NOT NULL,
		lifted_by TEXT NOT NULL DEFAULT '',
		lifted_at BIGINT NOT NULL DEFAULT 0,
		lift_reason TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX holds_active ON holds (lifted_at, camera_id);`,
	// 5: the plate read of licence plate events, by event id; the days
	// each camera keeps the video around its events.
	`CREATE TABLE event_plates (
		event_uid TEXT NOT NULL PRIMARY KEY,
		plate TEXT NOT NULL,
		confidence DOUBLE PRECISION NOT NULL DEFAULT 0
	);
	CREATE TABLE camera_event_keep (
		camera_id BIGINT NOT NULL PRIMARY KEY,
		days INTEGER NOT NULL
	);`,
	// 6: the downloadable videos asked for in the last hours, by client
	// and user, removed ones included (the hourly bounds count them); the
	// generation of each RTMP push camera's stream key.
	`CREATE TABLE video_requests (
		id {{id}},
		client_id BIGINT NOT NULL,
		user_id BIGINT NOT NULL,
		requested_at BIGINT NOT NULL
	);
	CREATE INDEX video_requests_client ON video_requests (client_id, requested_at);
	CREATE INDEX video_requests_time ON video_requests (requested_at);
	ALTER TABLE cameras ADD COLUMN push_key_gen INTEGER NOT NULL DEFAULT 0;`,
}

// migrate creates the version table and applies the migrations not yet
// applied. Concurrent API nodes starting together are serialised by the
// transaction (SQLite: immediate; PostgreSQL: an advisory lock).
func (d *DB) migrate(ctx context.Context) error {
	if _, err := d.sql.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("database: migrations table: %w", err)
	}
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("database: migrate: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if d.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7262011)`); err != nil {
			return fmt.Errorf("database: migrate lock: %w", err)
		}
	}
	var applied int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&applied); err != nil {
		return fmt.Errorf("database: migrate: %w", err)
	}
	idType := "INTEGER PRIMARY KEY AUTOINCREMENT"
	if d.dialect == Postgres {
		idType = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
	}
	for v := applied + 1; v <= len(migrations); v++ {
		for _, stmt := range strings.Split(strings.ReplaceAll(migrations[v-1], "{{id}}", idType), ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("database: migration %d: %w", v, err)
			}
		}
		if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), v, nowMs()); err != nil {
			return fmt.Errorf("database: migration %d: %w", v, err)
		}
	}
	return tx.Commit()
}

// Version returns the schema version applied.
func (d *DB) Version(ctx context.Context) (int, error) {
	var v int
	err := d.sql.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}
