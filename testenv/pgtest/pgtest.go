// Package pgtest runs throwaway PostgreSQL clusters for tests. It is apart
// from testenv so that the packages tested under the race detector do not
// compile the PostgreSQL driver.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" database/sql driver

	"github.com/vigia/vigia/testenv"
)

// readyTimeout bounds how long Start waits for the server.
const readyTimeout = 60 * time.Second

// Server is a throwaway PostgreSQL cluster on 127.0.0.1 with trust
// authentication, in a temporary directory removed by Close.
type Server struct {
	// Port is the TCP port on 127.0.0.1.
	Port int

	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	out  *testenv.Buffer
	mu   sync.Mutex
	n    int
}

// postgresBinDir finds the directory of Debian's PostgreSQL server binaries
// (the newest under /usr/lib/postgresql), or the one of initdb on PATH.
func postgresBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found under /usr/lib/postgresql/*/bin or on PATH: run `make deps` (installs the Debian package postgresql)")
}

// Start initialises and starts a PostgreSQL cluster on a free port.
// As root, the server runs as the "postgres" user (initdb refuses root).
// Call Close to stop it and remove its files.
func Start() (*Server, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("postgres: running as root needs the postgres user (Debian package postgresql): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "vigia-pg-*")
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Server{dir: dir, out: &testenv.Buffer{}}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			s.removeDir()
			return nil, fmt.Errorf("postgres: chown %s: %w", dir, err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		s.removeDir()
		return nil, fmt.Errorf("postgres: initdb: %w\n%s", err, out)
	}
	for attempt := 0; attempt < 3; attempt++ {
		if err = s.start(bin, data, cred); err == nil {
			return s, nil
		}
	}
	s.removeDir()
	return nil, fmt.Errorf("postgres: %w\noutput:\n%s", err, s.out.String())
}

// start runs the server on a fresh free port and waits until it answers.
func (s *Server) start(bin, data string, cred *syscall.Credential) error {
	port, err := testenv.PickPort()
	if err != nil {
		return err
	}
	s.Port = port
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(s.Port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "shared_buffers=16MB", "-c", "max_connections=200")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	cmd.Dir = s.dir
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { // exits when the process does
		_ = cmd.Wait()
		close(done)
	}()
	deadline := time.Now().Add(readyTimeout)
	for {
		select {
		case <-done:
			return fmt.Errorf("postgres exited on port %d", s.Port)
		default:
		}
		if err := s.ping(); err == nil {
			s.cmd, s.done = cmd, done
			return nil
		} else if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("postgres not ready after %v: %w", readyTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) ping() error {
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// URL returns the connection URL of database name.
func (s *Server) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, name)
}

// NewDatabase creates an empty database for the test, dropped when the
// test ends, and returns its URL.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("t%d_%s", s.n, strings.ToLower(rand.Text()[:8]))
	s.mu.Unlock()
	if err := s.admin("CREATE DATABASE " + name); err != nil {
		t.Fatalf("postgres: create database: %v", err)
	}
	t.Cleanup(func() {
		if err := s.admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Logf("postgres: drop database %s: %v", name, err)
		}
	})
	return s.URL(name)
}

func (s *Server) admin(stmt string) error {
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// Output returns what the server printed.
func (s *Server) Output() string { return strings.TrimSpace(s.out.String()) }

// Close stops the server (fast shutdown) and removes its files.
func (s *Server) Close() {
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		s.cmd = nil
	}
	s.removeDir()
}

func (s *Server) removeDir() { _ = os.RemoveAll(s.dir) }
