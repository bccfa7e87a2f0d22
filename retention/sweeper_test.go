package retention

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/testenv"
)

// clock is an injected clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// plan is the cameras' retention, changed by the test.
type plan struct {
	mu   sync.Mutex
	days map[string]int
}

func (p *plan) set(cam string, days int) { p.mu.Lock(); p.days[cam] = days; p.mu.Unlock() }

func (p *plan) cameras(context.Context) ([]CameraRetention, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []CameraRetention
	for c, d := range p.days {
		out = append(out, CameraRetention{Camera: c, Days: d})
	}
	slices.SortFunc(out, func(a, b CameraRetention) int { return cmpStr(a.Camera, b.Camera) })
	return out, nil
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// objectKeys returns the keys of one camera's objects written at t: a
// segment (in both key forms), a minute thumbnail, an hourly thumbnail and
// a snapshot.
func objectKeys(cam string, t time.Time) []string {
	return []string{
		storage.SegmentKey(cam, t, 10*time.Second, 812),
		storage.SegmentKey(cam, t, 10*time.Second, 0),
		storage.MinuteThumbKey(cam, t),
		storage.HourlyThumbKey(cam, t),
		storage.SnapshotKey(cam, t),
	}
}

func put(t *testing.T, st storage.Store, key string, days int) {
	t.Helper()
	err := st.Put(context.Background(), key, bytes.NewReader([]byte("x")), 1, storage.PutOptions{
		Tags: map[string]string{storage.TagRetentionDays: strconv.Itoa(days)},
	})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func exists(t *testing.T, st storage.Store, key string) bool {
	t.Helper()
	_, err := st.Stat(context.Background(), key)
	if errors.Is(err, storage.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatalf("stat %s: %v", key, err)
	}
	return true
}

// listSpy records List calls and can fail a Delete call.
type listSpy struct {
	storage.Store
	mu        sync.Mutex
	lists     []storage.ListOptions
	prefixes  []string
	deletes   int
	failAfter int // fail the Delete call with this number (1-based); 0 never
}

func (s *listSpy) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error) {
	s.mu.Lock()
	s.lists = append(s.lists, opts)
	s.prefixes = append(s.prefixes, prefix)
	s.mu.Unlock()
	return s.Store.List(ctx, prefix, opts)
}

func (s *listSpy) Delete(ctx context.Context, keys []string) error {
	s.mu.Lock()
	s.deletes++
	n := s.deletes
	s.mu.Unlock()
	if s.failAfter > 0 && n == s.failAfter {
		return errors.New("injected delete failure")
	}
	return s.Store.Delete(ctx, keys)
}

// runRetention is the shared scenario: a history_days 1 camera and a
// history_days 7 camera, objects of several ages, sweeps under an injected
// clock, a crash mid-sweep, and a plan change from 7 to 1 day.
func runRetention(t *testing.T, st storage.Store) {
	ctx := context.Background()
	base := time.Now().UTC()
	clk := &clock{t: base}
	p := &plan{days: map[string]int{"cam1": 1, "cam7": 7}}
	ages := []time.Duration{400 * 24 * time.Hour, 10 * 24 * time.Hour, 3 * 24 * time.Hour, 30 * time.Hour, 2 * time.Hour, 0}
	keys := map[string]map[time.Duration][]string{}
	for cam, days := range map[string]int{"cam1": 1, "cam7": 7} {
		keys[cam] = map[time.Duration][]string{}
		for _, age := range ages {
			for _, k := range objectKeys(cam, base.Add(-age)) {
				put(t, st, k, days)
				keys[cam][age] = append(keys[cam][age], k)
			}
		}
		ev := storage.EventImageKey(cam, "ev1")
		put(t, st, ev, days)
		keys[cam][-1] = []string{ev} // written now (real clock)
	}
	// An object of an unknown camera is never touched.
	stranger := storage.SegmentKey("stranger", base.Add(-400*24*time.Hour), time.Second, 812)
	put(t, st, stranger, 1)

	spy := &listSpy{Store: st}
	sw, err := New(Config{Store: spy, Cameras: p.cameras, Now: clk.Now, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string, want map[string][]time.Duration) {
		t.Helper()
		for cam, byAge := range keys {
			for age, ks := range byAge {
				keep := slices.Contains(want[cam], age)
				for _, k := range ks {
					if got := exists(t, st, k); got != keep {
						t.Errorf("%s: %s (age %v): exists=%v, want %v", step, k, age, got, keep)
					}
				}
			}
		}
		if !exists(t, st, stranger) {
			t.Errorf("%s: object of an unknown camera deleted", step)
		}
	}

	// A sweep that fails half way (a crash) leaves work that the next
	// sweep finishes.
	spy.failAfter = 2
	if _, err := sw.Sweep(ctx); err == nil {
		t.Fatal("sweep with a failing delete reported no error")
	}
	spy.failAfter = 0
	r, err := sw.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Objects == 0 || r.Prefixes == 0 {
		t.Errorf("report %+v: want objects and prefixes deleted", r)
	}
	check("now", map[string][]time.Duration{
		"cam1": {2 * time.Hour, 0, -1},
		"cam7": {3 * 24 * time.Hour, 30 * time.Hour, 2 * time.Hour, 0, -1},
	})

	// Two days later: the history_days 1 camera keeps nothing of then.
	clk.Add(2 * 24 * time.Hour)
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	check("+2 days", map[string][]time.Duration{
		"cam1": {},
		"cam7": {3 * 24 * time.Hour, 30 * time.Hour, 2 * time.Hour, 0, -1},
	})

	// The 7-day camera moves to a 1-day plan: its older objects go at the next run.
	p.set("cam7", 1)
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	check("plan 7 -> 1", map[string][]time.Duration{"cam1": {}, "cam7": {}})

	// Never a listing of the whole bucket or of a whole top-level prefix,
	// and a full listing of a camera's dated folder never happens.
	spy.mu.Lock()
	defer spy.mu.Unlock()
	for i, prefix := range spy.prefixes {
		opts := spy.lists[i]
		switch prefix {
		case "", storage.PrefixRecordings, storage.PrefixThumbs, storage.PrefixHourlyThumbs, storage.PrefixSnapshots, storage.PrefixEvents, storage.PrefixVideos:
			t.Errorf("listed %q", prefix)
		}
		for _, cam := range []string{"cam1", "cam7"} {
			if prefix == storage.CameraSegmentsPrefix(cam) && opts.Delimiter == "" {
				t.Errorf("listed every segment of %s", cam)
			}
		}
	}
}

func TestRetentionFS(t *testing.T) {
	st, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runRetention(t, st)
}

func TestRetentionMinIO(t *testing.T) {
	m := testenv.MinIO(t)
	ctx := context.Background()
	st, err := s3.New(ctx, s3.Options{Endpoint: m.Endpoint, Bucket: testenv.NewBucketName(t), AccessKey: m.AccessKey, SecretKey: m.SecretKey}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}

	// Lifecycle rules are installed, kept and read back.
	p := &plan{days: map[string]int{"cam1": 1, "cam7": 7}}
	sw, err := New(Config{Store: st, Cameras: p.cameras, Lifecycle: true, VideosMaxAge: 36 * time.Hour, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	cams, _ := p.cameras(ctx)
	if err := sw.EnsureRules(ctx, cams); err != nil {
		t.Fatal(err)
	}
	// The plan changes: the 7-day rule stays (objects still carry its tag).
	p.set("cam7", 30)
	cams, _ = p.cameras(ctx)
	if err := sw.EnsureRules(ctx, cams); err != nil {
		t.Fatal(err)
	}
	got, err := st.ExpiryRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []storage.ExpiryRule{
		{ID: "vigia-retention-1d", TagKey: storage.TagRetentionDays, TagValue: "1", Days: 1},
		{ID: "vigia-retention-30d", TagKey: storage.TagRetentionDays, TagValue: "30", Days: 30},
		{ID: "vigia-retention-7d", TagKey: storage.TagRetentionDays, TagValue: "7", Days: 7},
		{ID: "vigia-videos", Prefix: storage.PrefixVideos, Days: 2},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rules read back:\n got %+v\nwant %+v", got, want)
	}
	tags, err := st.Tags(ctx, "none")
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("tags of a missing object: %v %v", tags, err)
	}

	// Expiry itself, by the sweeper's logic under the injected clock.
	runRetention(t, st)
}

func TestRulesKeepOthers(t *testing.T) {
	cur := []storage.ExpiryRule{RetentionRule(3), {ID: VideosRuleID, Prefix: storage.PrefixVideos, Days: 9}}
	got := DesiredRules(cur, []CameraRetention{{Camera: "a", Days: 1}, {Camera: "b", Days: 0}}, 0)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if want := []string{"vigia-retention-1d", "vigia-retention-3d"}; !slices.Equal(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
}

func TestExpiredRounding(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 30, 0, 0, time.UTC)
	cut := Cutoff(now, 1) // 2026-03-09 12:30
	for _, c := range []struct {
		t    time.Time
		want bool
	}{
		{time.Date(2026, 3, 9, 11, 59, 59, 0, time.UTC), true},
		{time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC), false}, // its hour ends after the cutoff
		{time.Date(2026, 3, 9, 12, 29, 0, 0, time.UTC), false},
		{time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), false},
	} {
		if got := Expired(c.t, cut); got != c.want {
			t.Errorf("Expired(%v) = %v, want %v", c.t, got, c.want)
		}
	}
}

func TestSpan(t *testing.T) {
	parent := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		l    level
		name string
		ok   bool
	}{
		{levelYear, "2024", true}, {levelYear, "24", false}, {levelYear, "abcd", false},
		{levelMonth, "02", true}, {levelMonth, "13", false}, {levelMonth, "00", false},
		{levelDay, "29", true}, {levelDay, "30", false}, {levelHour, "23", true}, {levelHour, "24", false},
	} {
		if _, _, ok := span(c.l, parent, c.name); ok != c.ok {
			t.Errorf("span(%d, %q) ok=%v, want %v", c.l, c.name, ok, c.ok)
		}
	}
}

// stuckStore's listings never advance: every page is empty and continues
// after "rec/cam/0".
type stuckStore struct {
	storage.Store
	lists int
}

func (s *stuckStore) List(context.Context, string, storage.ListOptions) (storage.ListPage, error) {
	s.lists++
	if s.lists > 100 {
		return storage.ListPage{}, errors.New("listed past the no-progress point")
	}
	return storage.ListPage{Next: "rec/cam/0"}, nil
}

// TestSweepStuckListing: a listing whose pages do not advance ends the
// sweep with an error at once instead of paging forever.
func TestSweepStuckListing(t *testing.T) {
	st := &stuckStore{}
	sw, err := New(Config{Store: st, Cameras: func(context.Context) ([]CameraRetention, error) {
		return []CameraRetention{{Camera: "cam", Days: 1}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sw.Sweep(t.Context())
	if err == nil || st.lists != 2 {
		t.Fatalf("Sweep = %v after %d listings, want an error after 2", err, st.lists)
	}
}
