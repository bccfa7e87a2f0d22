package segmenter

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vigia/vigia/media"
)

// lockstep is a set of cameras recording the same clip in step, as
// synthetic cameras started together do: they cut their segments at the
// same moment.
type lockstep struct {
	writers []*Writer
	units   [][]*media.Unit
	next    int // index of the next unit of every camera
}

func newLockstep(t *testing.T, sp *Spool, clip *testClip, cameras, frames int) *lockstep {
	t.Helper()
	base := time.UnixMilli(1_700_000_000_000)
	ls := &lockstep{}
	for i := range cameras {
		w := NewWriter(WriterConfig{Camera: fmt.Sprintf("cam%02d", i), SegmentDuration: time.Second, Spool: sp, Log: zap.NewNop()})
		if err := w.SetTracks(clip.tracks()); err != nil {
			t.Fatal(err)
		}
		ls.writers = append(ls.writers, w)
		ls.units = append(ls.units, clip.units(frames, base))
	}
	return ls
}

// writeTo writes every camera's units up to index end (exclusive), camera
// after camera for each unit; check runs after every unit written.
func (ls *lockstep) writeTo(t *testing.T, end int, check func()) {
	t.Helper()
	for ; ls.next < end; ls.next++ {
		for i, w := range ls.writers {
			if err := w.WriteUnit(ls.units[i][ls.next]); err != nil {
				t.Fatal(err)
			}
			if check != nil {
				check()
			}
		}
	}
}

func (ls *lockstep) close() {
	for _, w := range ls.writers {
		w.Close()
	}
}

// gatedStore is a healthy store whose uploads wait at a gate the test
// opens: finished segments pile up in the spool as long as it is shut.
type gatedStore struct {
	dirStore
	gmu  sync.Mutex
	gate chan struct{}
}

func (g *gatedStore) shut() {
	g.gmu.Lock()
	g.gate = make(chan struct{})
	g.gmu.Unlock()
}

func (g *gatedStore) open() {
	g.gmu.Lock()
	close(g.gate)
	g.gmu.Unlock()
}

func (g *gatedStore) upload(ctx context.Context, seg Segment, body io.ReadSeeker) error {
	g.gmu.Lock()
	gate := g.gate
	g.gmu.Unlock()
	select {
	case <-gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.dirStore.upload(ctx, seg, body)
}

// TestSpoolQuotaHealthyStorageDropsNothing: many cameras cut their segments
// at the same moment, each round, into a spool whose quota is one byte. The
// storage keeps up (each round's segments are stored before the next round
// ends) but stores nothing until every camera's segment of the round is
// waiting. Neither the open segments (far more than the quota) nor the
// burst of finished ones counts against the quota: nothing is dropped.
func TestSpoolQuotaHealthyStorageDropsNothing(t *testing.T) {
	const cameras, rounds = 16, 4
	clip := makeClip(t, media.H264, 2, 25, 25, false)
	gs := &gatedStore{dirStore: dirStore{dir: t.TempDir()}}
	gs.shut()
	var mu sync.Mutex
	var dropped []Segment
	sp, err := NewSpool(SpoolConfig{Dir: t.TempDir(), MaxBytes: 1, Upload: gs.upload,
		OnDropped: func(s Segment, _ string) { mu.Lock(); dropped = append(dropped, s); mu.Unlock() }, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	ls := newLockstep(t, sp, clip, cameras, 25*rounds+1)
	defer ls.close()

	for r := 1; r <= rounds; r++ {
		// The keyframe at r seconds ends every camera's segment of round r.
		ls.writeTo(t, 25*r+1, nil)
		if n := sp.Pending(); n != cameras {
			t.Fatalf("round %d: %d segments waiting, want all %d cameras' at once", r, n, cameras)
		}
		if sp.Bytes() <= sp.MaxBytes() || sp.Backlog() != 0 {
			t.Errorf("round %d: spool holds %d bytes (quota %d), backlog %d: want more than the quota held, no backlog",
				r, sp.Bytes(), sp.MaxBytes(), sp.Backlog())
		}
		gs.open()
		drain(t, sp)
		gs.shut()
		mu.Lock()
		n := len(dropped)
		mu.Unlock()
		if n != 0 {
			t.Fatalf("round %d: %d segments dropped while storage kept up", r, n)
		}
		if got := len(gs.stored()); got != r*cameras {
			t.Fatalf("round %d: %d segments stored, want %d", r, got, r*cameras)
		}
	}
}

// segmentSize returns the size of the largest of the first two 1-second
// segments the clip makes.
func segmentSize(t *testing.T, clip *testClip) int64 {
	t.Helper()
	ds := &dirStore{dir: t.TempDir()}
	sp := newTestSpool(t, t.TempDir(), ds)
	ls := newLockstep(t, sp, clip, 1, 51)
	ls.writeTo(t, 51, nil)
	drain(t, sp)
	var size int64
	for _, s := range ds.stored() {
		size = max(size, s.Size)
	}
	if size == 0 {
		t.Fatal("no segment to measure")
	}
	return size
}

// TestSpoolQuotaBoundsBacklog: storage is away while three cameras record.
// The backlog never exceeds the quota; what goes past it is dropped oldest
// first, each drop counted and logged, and never a camera's newest finished
// segment. When storage is back, everything kept is stored and the spool
// ends empty.
func TestSpoolQuotaBoundsBacklog(t *testing.T) {
	const cameras, rounds = 3, 10
	clip := makeClip(t, media.H264, 2, 25, 25, false)
	size := segmentSize(t, clip)
	quota := 4*size + size/2
	ds := &dirStore{dir: t.TempDir(), fail: true}
	core, logs := observer.New(zapcore.ErrorLevel)
	var mu sync.Mutex
	var dropped []Segment
	sp, err := NewSpool(SpoolConfig{Dir: t.TempDir(), MaxBytes: quota, Workers: 1, Upload: ds.upload,
		RetryMin: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond,
		OnDropped: func(s Segment, reason string) {
			if reason != "spool_full" {
				t.Errorf("segment dropped for %q, want spool_full", reason)
			}
			mu.Lock()
			dropped = append(dropped, s)
			mu.Unlock()
		}, Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	ls := newLockstep(t, sp, clip, cameras, 25*rounds+1)
	ls.writeTo(t, 25*rounds+1, func() {
		if b := sp.Backlog(); b > quota {
			t.Fatalf("backlog %d bytes, quota %d", b, quota)
		}
	})

	// Segments finish round after round, camera after camera: oldest first
	// means in that order.
	order := func(s Segment) string { return fmt.Sprintf("%d/%s", s.StartMs(), s.Camera) }
	mu.Lock()
	drops := append([]Segment(nil), dropped...)
	mu.Unlock()
	if len(drops) == 0 {
		t.Fatal("nothing dropped: the quota was never reached")
	}
	for i := 1; i < len(drops); i++ {
		if order(drops[i]) < order(drops[i-1]) {
			t.Errorf("drop %d (%s) is older than drop %d (%s)", i, order(drops[i]), i-1, order(drops[i-1]))
		}
	}
	sp.mu.Lock()
	var waiting []Segment
	for _, q := range sp.queue {
		waiting = append(waiting, q.seg)
		if q.backlog && !q.busy && order(q.seg) < order(drops[len(drops)-1]) {
			t.Errorf("kept %s, older than the dropped %s", order(q.seg), order(drops[len(drops)-1]))
		}
	}
	sp.mu.Unlock()
	newest := (rounds - 1) * 1000 // start of each camera's newest finished segment, in ms from base
	for _, s := range drops {
		if s.StartMs()-1_700_000_000_000 >= int64(newest) {
			t.Errorf("dropped %s, its camera's newest finished segment", order(s))
		}
	}
	if got := logs.FilterMessage("spool full, oldest segment dropped").Len(); got != len(drops) {
		t.Errorf("%d drops logged, %d dropped", got, len(drops))
	}
	if len(waiting)+len(drops) != cameras*rounds {
		t.Errorf("%d waiting and %d dropped, want %d segments in all", len(waiting), len(drops), cameras*rounds)
	}

	// Storage is back: everything kept is stored, the spool ends empty.
	ds.mu.Lock()
	ds.fail = false
	ds.mu.Unlock()
	drain(t, sp)
	stored := map[string]bool{}
	for _, s := range ds.stored() {
		stored[order(s)] = true
	}
	for _, s := range waiting {
		if !stored[order(s)] {
			t.Errorf("kept segment %s not stored", order(s))
		}
	}
	for _, s := range drops {
		if stored[order(s)] {
			t.Errorf("dropped segment %s stored", order(s))
		}
	}
	ls.close()
	drain(t, sp)
	if sp.Bytes() != 0 || sp.Backlog() != 0 {
		t.Errorf("drained spool holds %d bytes, backlog %d", sp.Bytes(), sp.Backlog())
	}
	if left, _ := filepath.Glob(filepath.Join(sp.cfg.Dir, "*", "*")); len(left) != 0 {
		t.Errorf("files left in the drained spool: %v", left)
	}
}

// TestSpoolBacklogAccounting checks the backlog against its definition
// after each change of the queue: segments queued, stored, dropped for the
// quota and dropped for disk space (which may take a camera's newest).
func TestSpoolBacklogAccounting(t *testing.T) {
	sp, err := NewSpool(SpoolConfig{Dir: t.TempDir(), MaxBytes: 1 << 40, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		sp.mu.Lock()
		defer sp.mu.Unlock()
		last := map[string]*queued{}
		for _, q := range sp.queue {
			last[q.seg.Camera] = q
		}
		var want, bytes int64
		for _, q := range sp.queue {
			bytes += q.seg.Size
			if last[q.seg.Camera] != q {
				want += q.seg.Size
			}
			if q.backlog != (last[q.seg.Camera] != q) {
				t.Errorf("%s: %s/%d backlog=%v", step, q.seg.Camera, q.seg.StartMs(), q.backlog)
			}
		}
		if sp.backlog != want || sp.bytes != bytes {
			t.Errorf("%s: backlog %d bytes %d, want %d and %d", step, sp.backlog, sp.bytes, want, bytes)
		}
		if len(sp.newest) != len(last) {
			t.Errorf("%s: newest of %d cameras, want %d", step, len(sp.newest), len(last))
		}
		for c, q := range last {
			if sp.newest[c] != q {
				t.Errorf("%s: newest of %s is not its last queued segment", step, c)
			}
		}
	}
	seg := func(cam string, sec int64, size int64) Segment {
		return Segment{Camera: cam, Start: time.Unix(sec, 0), Size: size, Path: filepath.Join(sp.cfg.Dir, cam, fmt.Sprint(sec)+".mp4")}
	}
	add := func(s Segment) {
		sp.mu.Lock()
		sp.bytes += s.Size
		sp.mu.Unlock()
		sp.enqueue(s)
	}
	for sec := int64(0); sec < 3; sec++ {
		add(seg("a", sec, 100+sec))
		add(seg("b", sec, 200+sec))
		check(fmt.Sprintf("queued second %d", sec))
	}
	add(seg("c", 0, 300))
	check("queued c")

	q := sp.next() // a's oldest, as an upload worker takes it
	if q.seg.Camera != "a" {
		t.Fatalf("next took %s/%d", q.seg.Camera, q.seg.StartMs())
	}
	sp.done(q, true)
	check("a stored")
	sp.dropOldest(fmt.Errorf("test")) // b's oldest
	check("b dropped for room")
	sp.mu.Lock()
	sp.cfg.MaxBytes = 201 // a's 101 and b's 201 wait: a's goes
	dropped := sp.overQuota()
	sp.mu.Unlock()
	if len(dropped) != 1 || dropped[0].Camera != "a" {
		t.Errorf("over quota dropped %+v, want a's oldest", dropped)
	}
	check("a dropped for the quota")
	for sp.dropOldest(fmt.Errorf("test")) {
		check("dropped for room")
	}
	check("empty")
	if sp.Pending() != 0 {
		t.Errorf("%d left", sp.Pending())
	}

	// A full disk takes the newest of a camera whose oldest is being
	// uploaded: the oldest becomes its newest again.
	sp.mu.Lock()
	sp.cfg.MaxBytes = 1 << 40
	sp.mu.Unlock()
	add(seg("d", 0, 400))
	add(seg("d", 1, 401))
	q = sp.next()
	if !sp.dropOldest(fmt.Errorf("test")) || sp.Pending() != 1 {
		t.Fatalf("d's newest not dropped for room: %d waiting", sp.Pending())
	}
	check("d's newest dropped for room")
	sp.done(q, true)
	check("d stored")
}

// TestSpoolQuotaShare: during a storage outage one camera's backlog grows
// far faster than another's. Each camera with a backlog has an equal share
// of the quota: the loud camera loses its own oldest segments, never the
// quiet camera's, although the quiet camera's are older.
func TestSpoolQuotaShare(t *testing.T) {
	var dropped []Segment
	sp, err := NewSpool(SpoolConfig{Dir: t.TempDir(), MaxBytes: 1000, Log: zap.NewNop(),
		OnDropped: func(s Segment, _ string) { dropped = append(dropped, s) }})
	if err != nil {
		t.Fatal(err)
	}
	add := func(cam string, sec, size int64) {
		s := Segment{Camera: cam, Start: time.Unix(sec, 0), Size: size, Path: filepath.Join(sp.cfg.Dir, cam, fmt.Sprint(sec)+".mp4")}
		sp.mu.Lock()
		sp.bytes += s.Size
		sp.mu.Unlock()
		sp.enqueue(s)
	}
	for sec := int64(0); sec < 4; sec++ {
		add("quiet", sec, 100) // a backlog of 300 bytes, within its share of 500
	}
	for sec := int64(4); sec < 40; sec++ {
		add("loud", sec, 300)
		if b := sp.Backlog(); b > sp.MaxBytes() {
			t.Fatalf("backlog %d bytes, quota %d", b, sp.MaxBytes())
		}
	}
	if len(dropped) == 0 {
		t.Fatal("nothing dropped: the quota was never reached")
	}
	var last int64
	for i, s := range dropped {
		if s.Camera != "loud" {
			t.Errorf("drop %d: %s/%d, a camera within its share", i, s.Camera, s.StartMs())
		}
		if s.StartMs() < last {
			t.Errorf("drop %d: %s/%d older than the drop before", i, s.Camera, s.StartMs())
		}
		last = s.StartMs()
	}
	sp.mu.Lock()
	var quiet int
	for _, q := range sp.queue {
		if q.seg.Camera == "quiet" {
			quiet++
		}
	}
	sp.mu.Unlock()
	if quiet != 4 {
		t.Errorf("%d of the quiet camera's 4 segments kept", quiet)
	}
}
