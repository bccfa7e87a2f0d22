package catalogue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// gapKeys lists the gap records stored for camera in [from, to).
func gapKeys(t *testing.T, c *Catalogue, camera string, from, to time.Time) []string {
	t.Helper()
	var out []string
	for h, err := range c.Range(context.Background(), camera, from, to) {
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range h.Gaps {
			out = append(out, fmt.Sprintf("%d+%d %s", g.StartMs, g.DurMs, g.Cause))
		}
	}
	return out
}

func testJournal(t *testing.T, st storage.Store) {
	var mu sync.Mutex
	var published []string
	j := NewJournal(JournalConfig{Store: st, Node: "n1", Log: zaptest.NewLogger(t),
		Attrs: func(context.Context, string) (map[string]string, map[string]string) {
			return map[string]string{storage.MetaRetentionDays: "7"}, map[string]string{storage.TagRetentionDays: "7"}
		},
		Publish: func(g status.Gap, key string) error {
			mu.Lock()
			published = append(published, key)
			mu.Unlock()
			return nil
		}})
	open := status.Gap{Camera: "cam", StartMs: ms(at(10, 0, 10)), Cause: status.CauseCameraOffline}
	j.Record(open)
	closed := open
	closed.EndMs = ms(at(10, 0, 20))
	j.Record(closed)
	j.Record(status.Gap{Camera: "cam", StartMs: 5, Cause: "made_up"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	j.Close(ctx)
	c := New(Config{Store: st})
	got := gapKeys(t, c, "cam", at(10, 0, 0), at(11, 0, 0))
	want := []string{fmt.Sprintf("%d+0 camera_offline", open.StartMs), fmt.Sprintf("%d+10000 camera_offline", open.StartMs)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records %v, want %v", got, want)
	}
	key := recordKey(closed)
	obj, err := st.Stat(ctx, key)
	if err != nil || obj.Metadata[storage.MetaRetentionDays] != "7" || obj.Metadata[storage.MetaCamera] != "cam" {
		t.Errorf("record metadata %v %v", obj.Metadata, err)
	}
	rc, err := st.Get(ctx, key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	var body status.Gap
	data, _ := io.ReadAll(rc)
	rc.Close()
	closed.Node = "n1"
	if json.Unmarshal(data, &body) != nil || body != closed {
		t.Errorf("record body %s, want %+v", data, closed)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(published) != 2 || published[1] != key {
		t.Errorf("published %v", published)
	}
	if s := j.Stats(); s.Written != 2 || s.Dropped != 1 {
		t.Errorf("stats %+v, want 2 written and the bad record dropped", s)
	}
}

// flakyStore fails Puts while down is set.
type flakyStore struct {
	storage.Store
	down atomic.Bool
	puts atomic.Int64
}

func (f *flakyStore) Put(ctx context.Context, key string, r io.Reader, size int64, opts storage.PutOptions) error {
	f.puts.Add(1)
	if f.down.Load() {
		return errors.New("storage away")
	}
	return f.Store.Put(ctx, key, r, size, opts)
}

// While storage is away the journal keeps its records and writes them, in
// order, when it is back; an open gap of a cause the node observes gets a
// record at each new hour; records over a camera's budget are merged.
func TestJournalTimeDriven(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &flakyStore{Store: memStore(t)}
		st.down.Store(true)
		start := time.Now() // the bubble's clock: 2000-01-01 00:00 UTC
		j := NewJournal(JournalConfig{Store: st, Node: "n1", Burst: 3, Refill: time.Minute, Log: zaptest.NewLogger(t)})
		defer j.Close(context.Background())
		off := status.Gap{Camera: "cam", StartMs: start.Add(10 * time.Minute).UnixMilli(), Cause: status.CauseCameraOffline}
		time.Sleep(10 * time.Minute)
		j.Record(off)
		time.Sleep(10 * time.Second)
		if n := st.puts.Load(); n < 2 {
			t.Errorf("%d write attempts in 10 s while storage is away, want retries", n)
		}
		st.down.Store(false)
		time.Sleep(time.Minute) // the backoff ends, the record is written
		// An hour later the gap is still open: a continuation in the new hour.
		time.Sleep(time.Hour - 11*time.Minute)
		synctest.Wait()
		c := New(Config{Store: st})
		hour := start.Add(time.Hour).UTC()
		got := gapKeys(t, c, "cam", start, start.Add(2*time.Hour))
		want := []string{fmt.Sprintf("%d+0 camera_offline", off.StartMs), fmt.Sprintf("%d+0 camera_offline", hour.UnixMilli())}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("records %v\nwant %v", got, want)
		}
		// Closed, it gets no more continuations.
		closed := off
		closed.EndMs = time.Now().UnixMilli()
		j.Record(closed)
		// A burst of RTP losses: 2 tokens left, the rest merged into one.
		base := time.Now()
		for i := range 10 {
			s := base.Add(time.Duration(i) * time.Second).UnixMilli()
			j.Record(status.Gap{Camera: "cam", StartMs: s, EndMs: s + 300, Cause: status.CauseRTPLoss})
		}
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		var rtp, offline []string
		for _, k := range gapKeys(t, c, "cam", start, time.Now()) {
			if len(k) > 0 && k[len(k)-8:] == "rtp_loss" {
				rtp = append(rtp, k)
			} else {
				offline = append(offline, k)
			}
		}
		if len(offline) != 3 {
			t.Errorf("offline records %v, want the open one, its continuation and the closed one", offline)
		}
		last := base.Add(9 * time.Second).UnixMilli()
		merged := fmt.Sprintf("%d+%d rtp_loss", base.Add(2*time.Second).UnixMilli(), last+300-base.Add(2*time.Second).UnixMilli())
		if len(rtp) != 3 || rtp[2] != merged {
			t.Errorf("rtp records %v, want two and then %s", rtp, merged)
		}
	})
}
