package db

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigia/vigia/testenv/pgtest"
)

// pg is the PostgreSQL cluster the tests of this package share.
var pg *pgtest.Server

func TestMain(m *testing.M) {
	var err error
	pg, err = pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	pg.Close()
	os.Exit(code)
}

// eachDB runs fn against a fresh SQLite and a fresh PostgreSQL database.
func eachDB(t *testing.T, fn func(t *testing.T, d *DB)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			url := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
			if kind == "postgres" {
				url = pg.NewDatabase(t)
			}
			d, err := Open(context.Background(), url, "")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			fn(t, d)
		})
	}
}
