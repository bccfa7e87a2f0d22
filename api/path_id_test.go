package api

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/storage"
)

// seenCameras records the camera ids handed to the live, snapshot and
// snapshot-at integrations.
type seenCameras struct {
	mu  sync.Mutex
	ids []string
}

func (s *seenCameras) add(id string) {
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
}

func (s *seenCameras) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ids...)
}

func (s *seenCameras) LiveURLs(_ context.Context, camera string, _ bool, _ time.Time) (string, string, error) {
	s.add(camera)
	return "http://live.example/" + camera + "/index.m3u8", "http://live.example", nil
}

func (s *seenCameras) TakeSnapshot(_ context.Context, camera string) (string, error) {
	s.add(camera)
	return "", nil
}

func (s *seenCameras) SnapshotAt(_ context.Context, camera string, _ time.Time) (string, error) {
	s.add(camera)
	return "", nil
}

// TestPathIDCanonical: a camera id in the path written another way than
// its decimal form ("01", "+1", "1 ", …) is either the camera itself
// (canonical id, prefixes and integrations) or refused, never another
// storage prefix or registry key. Objects stored under the zero-padded
// prefix must never be handed out.
func TestPathIDCanonical(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		seen := &seenCameras{}
		e.srv.cfg.Live, e.srv.cfg.Snapshots, e.srv.cfg.SnapshotAt = seen, seen, seen
		clientID, _, tok := e.clientWithUser("canonical@example.com")
		id := e.camera(clientID)
		c := camID(id)
		now := e.clock.Now()
		// The camera's objects, and decoys under the padded prefix "0"+c.
		for _, cam := range []string{c, "0" + c} {
			body := "init" + "segment of " + cam
			err := e.store.Put(context.Background(), storage.SegmentKey(cam, now.Add(-30*time.Minute), 6*time.Second, 4),
				strings.NewReader(body), int64(len(body)), storage.PutOptions{Metadata: map[string]string{catalogue.MetaInitSize: "4"}})
			if err != nil {
				t.Fatal(err)
			}
			e.put(storage.MinuteThumbKey(cam, now.Truncate(time.Hour)), "minute of "+cam)
			e.put(storage.HourlyThumbKey(cam, now.Truncate(time.Hour)), "hour of "+cam)
			e.put(storage.SnapshotKey(cam, now.Add(-time.Minute)), "snapshot of "+cam)
		}
		decoys := []string{"rec/0" + c + "/", "thumbs/0" + c + "/", "thumbs-hourly/0" + c + "/", "snap/0" + c + "/",
			"/api/camera/0" + c + "/", "live.example/0" + c + "/"}
		d, h, pd := e.digest(PurposeDigest, id), e.digest(PurposeHash, id), e.digest(PurposePlayer, id)
		ts, ms := strconv.FormatInt(now.Unix(), 10), strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10)
		routes := []struct {
			name, method string
			path         func(p string) string
			want         string // in a 200 answer: the canonical prefix handed out
		}{
			{"vod", "GET", func(p string) string {
				return "/api/camera/" + p + "/vod.m3u8?player_digest=" + pd + "&from=" + ms + "&to=" + strconv.FormatInt(now.UnixMilli(), 10)
			}, "/api/camera/" + c + "/segment/"},
			{"vod by token", "GET", func(p string) string {
				return "/api/camera/" + p + "/vod.m3u8?token=" + tok + "&from=" + ms + "&to=" + strconv.FormatInt(now.UnixMilli(), 10)
			}, "/api/camera/" + c + "/segment/"},
			{"player", "GET", func(p string) string { return "/api/camera/" + p + "/player?player_digest=" + pd }, "/api/camera/" + c + "/vod.m3u8"},
			{"recordings", "GET", func(p string) string {
				return "/camera/" + p + "/recordings?token=" + tok + "&digest=" + d + "&timeStamp=" + ms
			}, "rec/" + c + "/"},
			{"recordings by hash", "GET", func(p string) string {
				return "/cameras/" + p + "/recordings/?token=" + tok + "&hash=" + h + "&timeStamp=" + ms
			}, "rec/" + c + "/"},
			{"thumbs minutes", "GET", func(p string) string {
				return "/api/camera/" + p + "/thumbs-minutes?token=" + tok + "&digest=" + d + "&ts=" + ts
			}, "thumbs/" + c + "/"},
			{"thumbs hourly", "GET", func(p string) string {
				return "/api/camera/" + p + "/thumbs-hourly?token=" + tok + "&digest=" + d + "&ts=" + ts
			}, "thumbs-hourly/" + c + "/"},
			{"snapshot", "GET", func(p string) string { return "/api/v1/cameras/" + p + "/print?token=" + tok + "&digest=" + d }, "snap/" + c + "/"},
			{"snapshot at ts", "GET", func(p string) string { return "/api/v1/cameras/" + p + "/print?token=" + tok + "&ts=" + ts }, ""},
			{"snapshot now", "POST", func(p string) string { return "/api/v1/cameras/" + p + "/print?token=" + tok }, ""},
			{"live url", "GET", func(p string) string { return "/api/camera/" + p + "/live-url?token=" + tok }, "live.example/" + c + "/"},
			{"live url slash", "POST", func(p string) string { return "/api/cameras/" + p + "/live-url/?token=" + tok }, "live.example/" + c + "/"},
			{"single read", "GET", func(p string) string { return "/api/camera-player/" + p + "?token=" + tok }, `"id":"` + c + `"`},
		}
		forms := []string{"0" + c, "00" + c, "+" + c, c + " ", " " + c, c + ".0", "0x" + c, "-" + c, c + "%00"}
		answered := 0
		for _, rt := range routes {
			// The canonical form works, so a refusal below is the form's.
			if r := e.do(rt.method, rt.path(c), nil); r.status != 200 || !strings.Contains(string(r.body), rt.want) {
				t.Fatalf("%s with %q: status %d: %.300s", rt.name, c, r.status, r.body)
			}
			for _, form := range forms {
				r := e.do(rt.method, rt.path(url.PathEscape(form)), nil)
				what := rt.name + " with " + strconv.Quote(form)
				for _, decoy := range decoys {
					if strings.Contains(string(r.body), decoy) {
						t.Errorf("%s: answer names %s: %.300s", what, decoy, r.body)
					}
				}
				switch {
				case r.status == 200:
					answered++
					if !strings.Contains(string(r.body), rt.want) {
						t.Errorf("%s: 200 without %s: %.300s", what, rt.want, r.body)
					}
				case r.status != 400 && r.status != 404:
					t.Errorf("%s: status %d, want 200, 400 or 404: %.300s", what, r.status, r.body)
				}
			}
		}
		if answered == 0 {
			t.Fatal("no padded form was served as the camera: the check above proves nothing")
		}
		for _, got := range seen.all() {
			if got != c {
				t.Errorf("an integration was asked for camera %q, want %q", got, c)
			}
		}
		// An update through a padded id writes the camera's registry record,
		// never one under the padded key.
		e.do("PUT", op("/api/v1/cameras/0"+c), rtspCamera(clientID, "203.0.113.8")).want(t, 201)
		if _, ok, err := e.bus.GetCamera(t.Context(), "0"+c); err != nil || ok {
			t.Fatalf("registry record under %q: %v %v", "0"+c, ok, err)
		}
		if rec, ok, err := e.bus.GetCamera(t.Context(), c); err != nil || !ok || rec.ID != c {
			t.Fatalf("registry record of %s: %+v %v %v", c, rec, ok, err)
		}
		// Ids in fields: a downloadable video and the events filter take
		// the camera itself.
		start := strconv.FormatInt(now.Add(-10*time.Minute).UnixMilli(), 10)
		end := strconv.FormatInt(now.Add(-9*time.Minute).UnixMilli(), 10)
		e.do("POST", "/v2/api/drives?token="+tok+"&camera_id=0"+c+"&start_at="+start+"&end_at="+end+"&description=v", nil).want(t, 200)
		e.exp.mu.Lock()
		job := e.exp.jobs[len(e.exp.jobs)-1]
		e.exp.mu.Unlock()
		if job.Camera != c {
			t.Fatalf("video job of camera_id %q is for camera %q, want %q", "0"+c, job.Camera, c)
		}
		e.do("GET", "/api/v1/events?token="+tok+"&start_at=2025-03-01&end_at=2025-03-31&camera=0"+c, nil).want(t, 200)
		// Events of a padded camera id are not the camera's.
		if err := e.srv.StoreEvent(t.Context(), EventIn{ID: "padded-event", Camera: "0" + c, Type: 1, At: now}); err != nil {
			t.Fatal(err)
		}
		r := e.do("GET", op("/api/v1/events?start_at=2025-03-01&end_at=2025-03-31"), nil).want(t, 200)
		if page := r.json(t).([]any)[0].(map[string]any); page["total"] != float64(0) {
			t.Fatalf("an event of camera %q was stored as camera %s's: %s", "0"+c, c, r.body)
		}
	})
}
