package segmenter

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
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

// defaultSyncEvery is the least time between the starts of two group sync
// rounds. Fragments end all through the second, one camera after another:
// without a pause every round would start as soon as the previous one
// ended, and each round pays for walking the filesystem's dirty files and a
// journal commit whatever it writes (29 rounds a second at 500 cameras,
// 13 % of the recorder's CPU). With it a round covers every fragment that
// ended in the last quarter second.
const defaultSyncEvery = 250 * time.Millisecond

// errSyncClosed is the error of a round asked for after the spool closed.
var errSyncClosed = errors.New("spool closed")

// groupSync is a group commit over one filesystem. A caller asks for a
// round (request) and may go on: the round starts at most every `every`,
// after the previous one, and covers everything written before it started;
// wait returns once the round asked for has finished. Callers asking while
// a round runs share the next.
type groupSync struct {
	dir   *os.File     // a descriptor on the filesystem
	fn    func() error // one round: syncFS(dir)
	every time.Duration

	mu        sync.Mutex
	cond      *sync.Cond
	running   bool
	scheduled bool // a timer will start the next round
	timer     *time.Timer
	lastStart time.Time // when the last round started
	wanted    uint64    // the newest round asked for
	started   uint64    // rounds started
	done      uint64    // rounds finished
	failed    uint64    // last round that failed
	err       error     // its error
	waiting   int       // callers waiting for a round to finish
	closed    bool      // rounds start at once, without a timer
}

func newGroupSync(dir string, every time.Duration) (*groupSync, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open spool dir: %w", err)
	}
	return newGroupSyncFunc(d, every, func() error { return syncFS(d) }), nil
}

// newGroupSyncFunc returns a groupSync whose rounds call fn, at most one
// every `every`.
func newGroupSyncFunc(dir *os.File, every time.Duration, fn func() error) *groupSync {
	g := &groupSync{dir: dir, fn: fn, every: every}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// request asks for a round that starts after the call and returns its
// number, for wait. An urgent round (a caller about to wait for it) starts
// without waiting for `every` to pass.
func (g *groupSync) request(urgent bool) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	target := g.started + 1
	if target > g.wanted {
		g.wanted = target
	}
	g.scheduleLocked()
	if urgent {
		g.hurryLocked()
	}
	return target
}

// hurry starts round target at once if it waits for its time.
func (g *groupSync) hurry(target uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started < target {
		g.hurryLocked()
	}
}

func (g *groupSync) hurryLocked() {
	if g.scheduled && g.timer != nil && g.timer.Stop() {
		g.timer = nil
		go g.run()
	}
}

// scheduleLocked starts the next round, now or when `every` has passed
// since the last one started, unless one is running (it schedules the next
// when it ends) or already scheduled.
func (g *groupSync) scheduleLocked() {
	if g.running || g.scheduled || g.wanted <= g.started {
		return
	}
	g.scheduled = true
	delay := time.Until(g.lastStart.Add(g.every))
	if delay <= 0 || g.closed {
		go g.run()
		return
	}
	g.timer = time.AfterFunc(delay, g.run)
}

// run is one round.
func (g *groupSync) run() {
	g.mu.Lock()
	g.scheduled, g.running = false, true
	g.started++
	round := g.started
	g.lastStart = time.Now()
	fn := g.fn
	g.mu.Unlock()
	err := fn()
	g.mu.Lock()
	g.running = false
	g.done = round
	if err != nil {
		g.failed, g.err = round, err
	}
	g.scheduleLocked()
	g.cond.Broadcast()
	g.mu.Unlock()
}

// wait returns once round target has finished, with that round's error
// (or a later one's).
func (g *groupSync) wait(target uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.done < target {
		g.waiting++
		g.cond.Wait()
		g.waiting--
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

// close starts a scheduled round at once and waits for the rounds under
// way, then closes the descriptor; rounds asked for later fail.
func (g *groupSync) close() {
	g.mu.Lock()
	g.closed = true
	g.hurryLocked()
	for g.running || g.scheduled {
		g.cond.Wait()
	}
	g.fn = func() error { return errSyncClosed }
	g.mu.Unlock()
	if g.dir != nil {
		_ = g.dir.Close()
	}
}
