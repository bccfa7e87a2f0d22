package api

import (
	"context"
	"io"
	"net/http"
	"path"
	"strconv"
	"testing"
	"time"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// fetch GETs a URL handed out and returns the body.
func fetch(t *testing.T, u string) string {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return string(b)
}

func TestMediaOperations(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		clientID, _, tok := e.clientWithUser("media@example.com")
		id := e.camera(clientID)
		c := strconv.FormatInt(id, 10)
		now := e.clock.Now()
		// Segments: one before timeStamp ending after it, two inside, one past 24 h.
		base := now.Add(-2 * time.Hour)
		segs := []struct {
			start time.Time
			dur   time.Duration
		}{
			{base.Add(-30 * time.Second), time.Minute},
			{base.Add(30 * time.Second), time.Minute},
			{base.Add(70 * time.Minute), time.Minute},
			{base.Add(25 * time.Hour), time.Minute},
			{base.Add(-2 * time.Hour), time.Minute},
		}
		for _, s := range segs {
			e.put(storage.SegmentKey(c, s.start, s.dur, 4), "seg-"+strconv.FormatInt(s.start.UnixMilli(), 10))
		}
		d := e.digest(PurposeDigest, id)
		ms := strconv.FormatInt(base.UnixMilli(), 10)
		r := e.do("GET", "/cameras/"+c+"/recordings/?token="+tok+"&id="+c+"&digest="+d+"&timeStamp="+ms, nil).want(t, 200)
		body := r.obj(t)
		data := body["DATA"].([]any)
		if body["CODE"] != float64(0) || body["MSG"] != "" || len(data) != 3 {
			t.Fatalf("recordings: %s", r.body)
		}
		first := data[0].(map[string]any)
		if first["ini"] != strconv.FormatInt(segs[0].start.UnixMilli(), 10) || first["dur"] != "60000" ||
			first["start_date"] != segs[0].start.UTC().Format(layoutDateTime) || first["file"] != path.Base(storage.SegmentKey(c, segs[0].start, segs[0].dur, 4)) {
			t.Fatalf("recording record: %v", first)
		}
		if got := fetch(t, first["url"].(string)); got != "seg-"+first["ini"].(string) {
			t.Fatalf("signed url serves %q", got)
		}
		e.do("GET", "/camera/"+c+"/recordings?token="+tok+"&digest="+d, nil).want(t, 422)
		r = e.do("GET", "/camera/"+c+"/recordings?token="+tok+"&timeStamp="+ms, nil).want(t, 422)
		if _, ok := r.obj(t)["CODE"]; !ok {
			t.Fatalf("recordings error is not in the CODE/MSG envelope: %s", r.body)
		}

		// Thumbnails: hourly of the day of ts, minutes of the hour of ts.
		hour := now.Truncate(time.Hour)
		for i := 0; i < 3; i++ {
			e.put(storage.MinuteThumbKey(c, hour.Add(time.Duration(i)*time.Minute)), "m")
			e.put(storage.HourlyThumbKey(c, hour.Add(-time.Duration(i)*time.Hour)), "h")
		}
		e.put(storage.MinuteThumbKey(c, hour.Add(-time.Minute)), "previous hour")
		ts := strconv.FormatInt(now.Unix(), 10)
		r = e.do("GET", "/api/camera/"+c+"/thumbs-minutes?token="+tok+"&id="+c+"&digest="+d+"&ts="+ts, nil).want(t, 200)
		mins := r.json(t).([]any)
		if len(mins) != 3 || mins[0].(map[string]any)["ts"] != float64(hour.Unix()) {
			t.Fatalf("minutes: %s", r.body)
		}
		fetch(t, mins[2].(map[string]any)["url"].(string))
		r = e.do("GET", "/api/camera/"+c+"/thumbs-hourly?token="+tok+"&id="+c+"&digest="+d+"&ts="+ts, nil).want(t, 200)
		if hrs := r.json(t).([]any); len(hrs) != 3 {
			t.Fatalf("hourly: %s", r.body)
		}
		e.do("GET", "/api/camera/"+c+"/thumbs-hourly?token="+tok+"&id="+c+"&ts="+ts, nil).want(t, 422)
		e.do("GET", "/api/camera/"+c+"/thumbs-hourly?token="+tok+"&id="+c+"&digest="+d+"&ts=x", nil).want(t, 422)

		// Listing and single read with status, thumb and digests.
		publishStatus(t, e.bus, status.Status{Camera: c, Code: status.Permanent, Width: 640, Height: 360, RecordingError: true})
		r = e.do("GET", "/api/v4/cameras?token="+tok+"&p=hls", nil).want(t, 200)
		cam := r.obj(t)["data"].([]any)[0].(map[string]any)
		if cam["stream_status_desc"] != "ERRO PERMANENTE" || cam["last_recieved_width"] != float64(640) || cam["recording_error"] != true ||
			cam["digest"] != d || cam["plan"] != "HD 720p - 7 days" || cam["thumb_url"] == "" || cam["client_id"] != strconv.FormatInt(clientID, 10) {
			t.Fatalf("listing record: %v", cam)
		}
		if _, has := cam["status"]; has {
			t.Fatal("listing record has status")
		}
		r = e.do("GET", "/api/camera-player/"+c+"?token="+tok, nil).want(t, 200)
		if one := r.obj(t); one["status"] != "ERRO PERMANENTE" || one["id"] != c {
			t.Fatalf("single read: %s", r.body)
		} else if _, has := one["stream_status_desc"]; has {
			t.Fatal("single read has stream_status_desc")
		}

		// Snapshots: none is code 1; the latest; the one at ts; POST without a node.
		snapURL := "/api/v1/cameras/" + c + "/print?token=" + tok + "&id=" + c
		e.put(storage.SnapshotKey(c, now.Add(-5*time.Minute)), "older")
		e.put(storage.SnapshotKey(c, now.Add(-time.Minute)), "newest")
		r = e.do("GET", snapURL, nil).want(t, 200)
		if got := fetch(t, r.obj(t)["print"].(string)); got != "newest" {
			t.Fatalf("latest snapshot %q", got)
		}
		r = e.do("GET", snapURL+"&digest="+d+"&ts="+strconv.FormatInt(now.Add(-5*time.Minute).Unix(), 10), nil).want(t, 200)
		if got := fetch(t, r.obj(t)["print"].(string)); got != "older" {
			t.Fatalf("snapshot at ts %q", got)
		}
		// Without a snapshot in that second: the minute thumbnail taken in
		// the minute up to ts.
		e.put(storage.MinuteThumbKey(c, hour.Add(3*time.Minute)), "minute 3")
		r = e.do("GET", snapURL+"&digest="+d+"&ts="+strconv.FormatInt(hour.Add(3*time.Minute+59*time.Second).Unix(), 10), nil).want(t, 200)
		if got := fetch(t, r.obj(t)["print"].(string)); got != "minute 3" {
			t.Fatalf("snapshot at ts from the minute thumbnail %q", got)
		}
		r = e.do("GET", snapURL+"&ts=1000", nil).want(t, 200)
		if m := r.obj(t); m["code"] != float64(1) || m["print"] != "" {
			t.Fatalf("no snapshot: %s", r.body)
		}
		r = e.do("POST", snapURL, nil).want(t, 200)
		if m := r.obj(t); m["code"] != float64(1) {
			t.Fatalf("post without a snapshot node: %s", r.body)
		}
		// A node answering on NATS takes it.
		stop, err := e.bus.ServeSnapshots(func(cam string) ([]byte, bool) {
			k := storage.SnapshotKey(cam, now)
			e.put(k, "fresh")
			return []byte(`{"key":"` + k + `"}`), true
		})
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		srv := e.srv
		srv.cfg.Snapshots = busSnapshots{e.bus}
		r = e.do("POST", snapURL, nil).want(t, 200)
		if got := fetch(t, r.obj(t)["print"].(string)); got != "fresh" {
			t.Fatalf("snapshot taken: %q", got)
		}

		// Live URL without a provider: code 1, data "".
		r = e.do("GET", "/api/camera/"+c+"/live-url?token="+tok+"&id="+c, nil).want(t, 200)
		if m := r.obj(t); m["code"] != float64(1) || m["data"] != "" {
			t.Fatalf("live: %s", r.body)
		}
	})
}

// busSnapshots is the NATS request of the wiring, for the test.
type busSnapshots struct{ b *bus.Bus }

func (s busSnapshots) TakeSnapshot(ctx context.Context, camera string) (string, error) {
	data, err := s.b.RequestSnapshot(ctx, camera)
	if err != nil {
		return "", err
	}
	return string(data[8 : len(data)-2]), nil
}
