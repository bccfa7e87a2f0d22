package segmenter

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// SpoolSync is how spooled fragments are made durable.
type SpoolSync string

// Spool sync modes.
const (
	// SyncGroup makes the fragments of every camera that are waiting at
	// the same moment durable together, with one syncfs(2) of the spool's
	// filesystem (Linux; elsewhere SyncFile). A fragment is durable when a
	// sync that started after it was written has finished, as with fsync:
	// what a crash loses does not change, and one journal commit serves
	// all cameras instead of one per camera and fragment.
	SyncGroup SpoolSync = "group"

	// SyncFile fsyncs each spool file after each fragment. It suits a
	// spool on a filesystem shared with other heavy writers, whose data a
	// group sync would write back too.
	SyncFile SpoolSync = "file"
)

// errUnknownSync is returned for a SpoolSync that is neither mode.
var errUnknownSync = errors.New("unknown spool sync mode")

// groupSync is a group commit over one filesystem: the caller that finds no
// sync running starts one for everyone waiting; those who come meanwhile
// wait for the next, which covers what they wrote.
type groupSync struct {
	dir *os.File     // a descriptor on the filesystem
	fn  func() error // one round: syncFS(dir)

	mu      sync.Mutex
	cond    *sync.Cond
	running bool
	started uint64 // rounds started
	done    uint64 // rounds finished
	failed  uint64 // last round that failed
	err     error  // its error
	waiting int    // callers waiting for a round to finish
}

func newGroupSync(dir string) (*groupSync, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open spool dir: %w", err)
	}
	return newGroupSyncFunc(d, func() error { return syncFS(d) }), nil
}

// newGroupSyncFunc returns a groupSync whose rounds call fn.
func newGroupSyncFunc(dir *os.File, fn func() error) *groupSync {
	g := &groupSync{dir: dir, fn: fn}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// sync returns once a round that started after the call has finished, with
// that round's error (or a later one's).
func (g *groupSync) sync() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	target := g.started + 1
	for g.done < target {
		if g.running {
			g.waiting++
			g.cond.Wait()
			g.waiting--
			continue
		}
		g.running = true
		g.started++
		round := g.started
		g.mu.Unlock()
		err := g.fn()
		g.mu.Lock()
		g.running = false
		g.done = round
		if err != nil {
			g.failed, g.err = round, err
		}
		g.cond.Broadcast()
	}
	if g.failed >= target {
		return g.err
	}
	return nil
}

// waiters returns the number of callers waiting while a round runs.
func (g *groupSync) waiters() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

func (g *groupSync) close() {
	if g.dir != nil {
		_ = g.dir.Close()
	}
}
