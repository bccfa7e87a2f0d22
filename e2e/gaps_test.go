package e2e

import (
	"encoding/json"
	"io"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// Gap records end to end (docs/recording.md, Gaps): each fault leaves a
// record of its cause in storage, beside the segments, spanning the hole
// they leave, and the catalogue's timeline gives readers that cause.
// camera_offline is checked by TestCameraOutage.

// gapRecords reads a camera's gap records from storage, in start order.
// Each body must agree with its key.
func gapRecords(t *testing.T, st storage.Store, cam string) []status.Gap {
	t.Helper()
	var out []status.Gap
	for obj, err := range storage.Walk(t.Context(), st, "rec/"+cam+"/") {
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		e, err := storage.ParseRecordingKey(obj.Key)
		if err != nil || e.Kind != storage.KindGap {
			continue
		}
		rc, err := st.Get(t.Context(), obj.Key, 0, -1)
		if err != nil {
			t.Fatalf("%s: %v", obj.Key, err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", obj.Key, err)
		}
		var g status.Gap
		if err := json.Unmarshal(body, &g); err != nil {
			t.Fatalf("%s: %v", obj.Key, err)
		}
		if g.Camera != cam || g.StartMs != e.StartMs || string(g.Cause) != e.Cause || (g.Open() != (e.DurMs == 0)) {
			t.Errorf("%s holds %+v", obj.Key, g)
		}
		out = append(out, g)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartMs < out[j].StartMs })
	return out
}

// waitGapRecords polls until cam's records of cause satisfy done, and
// returns them.
func waitGapRecords(t *testing.T, st storage.Store, cam string, cause status.Cause, timeout time.Duration, done func([]status.Gap) bool) []status.Gap {
	t.Helper()
	var got []status.Gap
	testenv.WaitFor(t, timeout, "gap records of cause "+string(cause), func() bool {
		got = got[:0]
		for _, g := range gapRecords(t, st, cam) {
			if g.Cause == cause {
				got = append(got, g)
			}
		}
		return done(got)
	})
	return got
}

// holes returns the holes between cam's stored segments longer than a
// frame: the end of the segment before each and the start of the one
// after.
func holes(segs []stored) [][2]int64 {
	var out [][2]int64
	for i := 1; i < len(segs); i++ {
		if segs[i].StartMs-segs[i-1].EndMs() > int64(frameInterval/time.Millisecond) {
			out = append(out, [2]int64{segs[i-1].EndMs(), segs[i].StartMs})
		}
	}
	return out
}

// near reports whether two times in milliseconds agree within 2 ms: a
// key's start and duration are each cut to the millisecond.
func near(a, b int64) bool { return a-b <= 2 && b-a <= 2 }

// timelineCause returns the cause the catalogue's timeline of cam gives
// the moment atMs, "" when it lies in no gap.
func timelineCause(t *testing.T, st storage.Store, cam string, atMs int64) status.Cause {
	t.Helper()
	cat := catalogue.New(catalogue.Config{Store: st, MaxSegment: storage.MaxSegmentDuration(2 * time.Second)})
	at := time.UnixMilli(atMs)
	tl, err := cat.Timeline(t.Context(), cam, at.Add(-time.Minute), time.Now(), catalogue.TimelineOptions{})
	if err != nil {
		t.Fatalf("timeline: %v", err)
	}
	for _, g := range tl.Gaps {
		if g.StartMs <= atMs && atMs < g.EndMs {
			return g.Cause
		}
	}
	t.Logf("timeline of %s at %d: %+v", cam, atMs, tl)
	return ""
}

// wantClosedGap checks that a closed record of cause spans hole exactly
// and that the timeline gives the hole that cause.
func wantClosedGap(t *testing.T, st storage.Store, cam string, cause status.Cause, hole [2]int64) {
	t.Helper()
	recs := waitGapRecords(t, st, cam, cause, 30*time.Second, func(gs []status.Gap) bool {
		for _, g := range gs {
			if !g.Open() {
				return true
			}
		}
		return false
	})
	found := false
	for _, g := range recs {
		if !g.Open() && near(g.StartMs, hole[0]) && near(g.EndMs, hole[1]) {
			found = true
		}
	}
	if !found {
		t.Errorf("records of %s %+v, want one closed spanning the hole %d..%d", cause, recs, hole[0], hole[1])
	}
	if c := timelineCause(t, st, cam, (hole[0]+hole[1])/2); c != cause {
		t.Errorf("the timeline gives the hole %d..%d the cause %q, want %q", hole[0], hole[1], c, cause)
	}
}

// TestGapCameraAuth: a recorded camera's password changes at the camera;
// it refuses the one the recorder has (ERRO PERMANENTE), and an open
// record of camera_auth follows the last stored segment, which the
// timeline gives readers as the cause.
func TestGapCameraAuth(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	spec := synth.CameraSpec{Path: "door", Codec: "h264", User: "admin", Pass: "old-pass"}
	cams := startSynth(t, spec)
	c := s3Config(t, m)
	c.Motion.Enabled = false
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	url := strings.Replace(cams.URL("door"), "rtsp://", "rtsp://admin:old-pass@", 1)
	if err := a.RecordCamera(ingest.Camera{ID: "door", URL: url, Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	waitSegments(t, st, "door", 2, 60*time.Second)

	// The password changes at the camera: its sessions end and it
	// refuses the old password.
	brokenAt := time.Now()
	if err := cams.RemoveCamera("door"); err != nil {
		t.Fatal(err)
	}
	spec.Pass = "new-pass"
	if err := cams.AddCamera(spec); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "status ERRO PERMANENTE", func() bool {
		s, _ := a.Recorder().Status("door")
		return s.Code == status.Permanent
	})
	recs := waitGapRecords(t, st, "door", status.CauseCameraAuth, 30*time.Second, func(gs []status.Gap) bool { return len(gs) > 0 })
	segs := segments(t, st, "door")
	last := segs[len(segs)-1]
	g := recs[0]
	if len(recs) != 1 || !g.Open() || g.Detail != ingest.ReasonAuth || g.Node != c.NodeID {
		t.Errorf("records of camera_auth %+v, want one open, detail %q, node %s", recs, ingest.ReasonAuth, c.NodeID)
	}
	// It begins where recording stopped (or, after a record of the
	// dropped connection, when the camera refused the password).
	if g.StartMs < last.EndMs()-2 || g.StartMs > time.Now().UnixMilli() || last.StartMs > brokenAt.UnixMilli()+1000 {
		t.Errorf("camera_auth from %d; last segment %s ends %d; password changed at %d", g.StartMs, last.Key, last.EndMs(), brokenAt.UnixMilli())
	}
	for _, o := range gapRecords(t, st, "door") {
		if o.Cause != status.CauseCameraAuth && (o.Cause != status.CauseCameraOffline || !near(o.StartMs, last.EndMs())) {
			t.Errorf("unexpected record %+v", o)
		}
	}
	// Readers see camera_auth from there on (ranked above camera_offline).
	testenv.WaitFor(t, 5*time.Second, "time past the record's start", func() bool { return time.Now().UnixMilli() > g.StartMs+500 })
	if cause := timelineCause(t, st, "door", g.StartMs+250); cause != status.CauseCameraAuth {
		t.Errorf("the timeline gives the time since the password changed the cause %q, want camera_auth", cause)
	}
	t.Logf("camera_auth from %+d ms after the last segment's end", g.StartMs-last.EndMs())
}

// TestGapNodeCrash: in a two-node cluster the node recording a camera is
// killed with SIGKILL; the node that takes the camera over writes a
// node_crash record from the end of the last segment stored to its own
// first segment.
func TestGapNodeCrash(t *testing.T) {
	t.Parallel()
	e := newClusterEnv(t, 1)
	procs := map[string]*exec.Cmd{"g1": e.node("g1"), "g2": e.node("g2")}
	testenv.WaitFor(t, 60*time.Second, "both nodes joined", func() bool {
		keys, err := e.bus.KV(bus.BucketNodes).Keys(t.Context())
		return err == nil && len(keys) == 2
	})
	joined := time.Now()
	// Two segments stored since both joined: the camera has settled on
	// its node.
	testenv.WaitFor(t, 60*time.Second, "c1 recording on its node", func() bool {
		n := 0
		for _, s := range segments(t, e.st, "c1") {
			if s.StartMs > joined.UnixMilli() {
				n++
			}
		}
		return n >= 2 && e.leases()["c1"] != ""
	})
	victim := e.leases()["c1"]
	survivor := "g1"
	if victim == "g1" {
		survivor = "g2"
	}
	if err := procs[victim].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = procs[victim].Process.Wait()
	killedAt := time.Now()
	before := segments(t, e.st, "c1")
	lastEnd := before[len(before)-1].EndMs()
	testenv.WaitFor(t, 60*time.Second, "c1 recording on the other node", func() bool {
		_, ok := e.recordingSince("c1", killedAt)
		return ok
	})
	first, _ := e.recordingSince("c1", killedAt)
	recs := waitGapRecords(t, e.st, "c1", status.CauseNodeCrash, 30*time.Second, func(gs []status.Gap) bool { return len(gs) > 0 })
	g := recs[0]
	if len(recs) != 1 || !near(g.StartMs, lastEnd) || !near(g.EndMs, first.UnixMilli()) || g.Node != survivor {
		t.Errorf("records of node_crash %+v, want one by %s from %d (the last stored segment's end) to %d (the first segment after)",
			recs, survivor, lastEnd, first.UnixMilli())
	}
	if c := timelineCause(t, e.st, "c1", (lastEnd+first.UnixMilli())/2); c != status.CauseNodeCrash {
		t.Errorf("the timeline gives the crash the cause %q, want node_crash", c)
	}
	t.Logf("node_crash: %d ms, from %+d ms of the kill", first.UnixMilli()-lastEnd, lastEnd-killedAt.UnixMilli())
}

// TestGapSpoolQuota: storage goes away and the spool's quota (1 byte of
// backlog) makes it drop segments; once storage is back, each dropped
// segment has a spool_quota record of its exact span, and together they
// fill the holes they leave.
func TestGapSpoolQuota(t *testing.T) {
	t.Parallel()
	m := testenv.MinIO(t)
	cams := startSynth(t, synth.CameraSpec{Path: "yard", Codec: "h264"})
	c := s3Config(t, m)
	c.Motion.Enabled = false
	c.Recording.SpoolMaxBytes = 1
	c.Recording.MaxCameras = 1
	log, logs := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "yard", URL: cams.URL("yard"), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	waitSegments(t, st, "yard", 2, 60*time.Second)
	m.Stop()
	const metric = `vigia_segments_dropped_total{reason="spool_full"}`
	testenv.WaitFor(t, 60*time.Second, "two segments dropped for the quota", func() bool {
		return scrapeMetrics(t, a.URL()+"/metrics")[metric] >= 2
	})
	m.Start()
	back := time.Now()
	testenv.WaitFor(t, 60*time.Second, "a segment stored after storage came back", func() bool {
		_, ok := segmentAfter(segments(t, st, "yard"), back)
		return ok
	})
	dropped := int(scrapeMetrics(t, a.URL()+"/metrics")[metric])
	recs := waitGapRecords(t, st, "yard", status.CauseSpoolQuota, 60*time.Second, func(gs []status.Gap) bool { return len(gs) >= dropped })
	if len(recs) != dropped {
		t.Errorf("%d records of spool_quota, %d segments dropped", len(recs), dropped)
	}
	// Each record begins where its segment, as the spool logged it,
	// began.
	starts := droppedStarts(t, logs.String())
	for _, g := range recs {
		if !starts[g.StartMs] {
			t.Errorf("record %+v: no segment dropped at its start (dropped: %v)", g, starts)
		}
		if g.Open() || g.Detail != "spool_full" || g.Node != c.NodeID || g.EndMs-g.StartMs < 1000 {
			t.Errorf("record %+v, want a closed one of a dropped segment, detail spool_full, node %s", g, c.NodeID)
		}
	}
	// The records tile the holes: each hole runs from a stored segment's
	// end to the next one's start through dropped segments that touch.
	segs := segments(t, st, "yard")
	hs := holes(segs)
	if len(hs) == 0 {
		t.Fatal("no hole in storage for the dropped segments")
	}
	i := 0
	for _, h := range hs {
		at := h[0]
		for i < len(recs) && recs[i].StartMs < h[1] {
			if !near(recs[i].StartMs, at) {
				t.Errorf("hole %d..%d: record %+v begins at %d, want %d", h[0], h[1], recs[i], recs[i].StartMs, at)
			}
			at = recs[i].EndMs
			i++
		}
		if !near(at, h[1]) {
			t.Errorf("hole %d..%d: the records end at %d", h[0], h[1], at)
		}
		if c := timelineCause(t, st, "yard", (h[0]+h[1])/2); c != status.CauseSpoolQuota {
			t.Errorf("the timeline gives the hole %d..%d the cause %q, want spool_quota", h[0], h[1], c)
		}
	}
	if i != len(recs) {
		t.Errorf("records %+v outside the holes %v", recs[i:], hs)
	}
	t.Logf("%d segments dropped, %d holes", dropped, len(hs))
}

// droppedStarts returns the starts of the segments the spool logged as
// dropped for its quota.
func droppedStarts(t *testing.T, logs string) map[int64]bool {
	t.Helper()
	out := map[int64]bool{}
	for line := range strings.Lines(logs) {
		var l struct {
			Msg     string `json:"msg"`
			StartMs int64  `json:"start_ms"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "spool full, oldest segment dropped" {
			out[l.StartMs] = true
		}
	}
	return out
}

// segmentAfter returns the first segment starting after t.
func segmentAfter(segs []stored, t time.Time) (stored, bool) {
	for _, s := range segs {
		if s.StartMs > t.UnixMilli() {
			return s, true
		}
	}
	return stored{}, false
}
