package retention

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
)

// putSegments stores n segments of camera, 10 minutes apart from start,
// each size bytes, and returns their keys oldest first.
func putSegments(t *testing.T, st storage.Store, camera string, start time.Time, n, size int) []string {
	t.Helper()
	var keys []string
	for i := range n {
		k := storage.SegmentKey(camera, start.Add(time.Duration(i)*10*time.Minute), 10*time.Minute, 100)
		if err := st.Put(context.Background(), k, bytes.NewReader(make([]byte, size)), int64(size), storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

// TestQuotaDeletesOldestFirst: a camera over its quota loses its oldest
// segments, and only as many as needed, within one sweep; the timeline
// shows retention_quota for them; a client over its quota loses the oldest
// segments across its cameras; the metrics report bytes, quotas and the
// warning before the quota bites.
func TestQuotaDeletesOldestFirst(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 10, 11, 0, 0, 0, time.UTC)
	a := putSegments(t, st, "a", t0, 10, 1000)                   // 11:00 to 12:30, 10 000 bytes
	b := putSegments(t, st, "b", t0.Add(5*time.Minute), 4, 1000) // 11:05 to 11:35
	c := putSegments(t, st, "c", t0.Add(7*time.Minute), 4, 1000)
	cams := []CameraRetention{
		{Camera: "a", QuotaBytes: 6500},
		{Camera: "b", Client: "9", ClientQuotaBytes: 5000},
		{Camera: "c", Client: "9", ClientQuotaBytes: 5000},
	}
	reg := prometheus.NewRegistry()
	sw, err := New(Config{Store: st, Cameras: func(context.Context) ([]CameraRetention, error) { return cams, nil },
		Registerer: reg, Now: func() time.Time { return t0.Add(3 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sw.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Camera a: 4 oldest segments gone (10 000 - 4 000 <= 6 500), 6 kept.
	for i, k := range a {
		if got, want := exists(t, st, k), i >= 4; got != want {
			t.Errorf("camera a segment %d kept=%v, want %v", i, got, want)
		}
	}
	// Client 9: b and c interleave (b at :05, c at :07, ...); 8 000 bytes
	// to 5 000 takes the three oldest across both: b0, c0, b1.
	gone := map[string]bool{b[0]: true, c[0]: true, b[1]: true}
	for _, k := range append(append([]string{}, b...), c...) {
		if exists(t, st, k) == gone[k] {
			t.Errorf("client 9 segment %s kept=%v", k, !gone[k])
		}
	}
	if r.QuotaSegments != 7 || r.QuotaBytes != 7000 {
		t.Errorf("report %+v, want 7 segments, 7000 bytes", r)
	}
	cat := catalogue.New(catalogue.Config{Store: st, Now: func() time.Time { return t0.Add(3 * time.Hour) }})
	tl, err := cat.Timeline(ctx, "a", t0, t0.Add(100*time.Minute), catalogue.TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Gaps) != 1 || tl.Gaps[0].Cause != status.CauseRetentionQuota || tl.Gaps[0].StartMs != t0.UnixMilli() || tl.Gaps[0].EndMs != t0.Add(40*time.Minute).UnixMilli() {
		t.Errorf("timeline gaps %+v, want retention_quota over the first 40 minutes", tl.Gaps)
	}
	if v := value(t, reg, "vigia_storage_quota_warning", "9", ""); v != 1 {
		t.Errorf("warning of client 9 after its quota bit: %v", v)
	}
	if v := value(t, reg, "vigia_storage_quota_warning", "", "a"); v != 1 {
		t.Errorf("warning of camera a, at its quota after the sweep: %v", v)
	}
	if v := value(t, reg, "vigia_storage_quota_bytes", "", "a"); v != 6500 {
		t.Errorf("quota of camera a: %v", v)
	}
	if v := value(t, reg, "vigia_storage_bytes", "9", "b"); v != 2000 {
		t.Errorf("vigia_storage_bytes{client=9,camera=b} = %v, want 2000", v)
	}
	// Before the quota bites: camera a at 6 000 + gap record of 6 500.
	cams[0].QuotaBytes = 6600
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if v := value(t, reg, "vigia_storage_quota_warning", "", "a"); v != 1 {
		t.Errorf("warning of camera a at over 90%% of its quota: %v", v)
	}
	if !exists(t, st, a[4]) {
		t.Error("a segment deleted under the quota")
	}
	cams[0].QuotaBytes = 20000
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if v := value(t, reg, "vigia_storage_quota_warning", "", "a"); v != 0 {
		t.Errorf("warning of camera a at a third of its quota: %v", v)
	}
}

// value returns the value of the gauge name{client,camera} in reg, or -1.
func value(t *testing.T, reg *prometheus.Registry, name, client, camera string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["client"] == client && l["camera"] == camera {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

// TestHoldsKeepRecordings: neither history_days nor a quota deletes what a
// legal hold covers, nor the hour manifest beside it; the quota takes the
// next oldest segment instead.
func TestHoldsKeepRecordings(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 10, 11, 0, 0, 0, time.UTC)
	a := putSegments(t, st, "a", t0, 4, 1000)
	manifest := storage.SegmentPrefix("a", t0) + "manifest.json"
	if err := st.Put(ctx, manifest, bytes.NewReader([]byte("{}")), 2, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	cams := []CameraRetention{{Camera: "a", QuotaBytes: 3100}}
	holds := []Hold{{Camera: "a", FromMs: t0.UnixMilli(), ToMs: t0.Add(time.Minute).UnixMilli()}}
	sw, err := New(Config{Store: st, Cameras: func(context.Context) ([]CameraRetention, error) { return cams, nil },
		Holds: func(context.Context) ([]Hold, error) { return holds, nil },
		Now:   func() time.Time { return t0.Add(30 * 24 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if !exists(t, st, a[0]) || exists(t, st, a[1]) || !exists(t, st, a[2]) {
		t.Fatal("quota: the held oldest segment must stay and the next oldest go")
	}
	cams[0] = CameraRetention{Camera: "a", Days: 1}
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if !exists(t, st, a[0]) || !exists(t, st, manifest) || exists(t, st, a[2]) {
		t.Fatal("history_days: the held segment and its hour's manifest must stay, the rest go")
	}
	holds = nil
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(t, st, a[0]) {
		t.Fatal("the segment outlived its lifted hold")
	}
}
