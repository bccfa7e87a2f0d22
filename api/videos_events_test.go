package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/testenv"
)

func TestDownloadableVideos(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		clientID, userID, tok := e.clientWithUser("video@example.com")
		c := strconv.FormatInt(e.camera(clientID), 10)
		start := e.clock.Now().Add(-30 * time.Minute).UnixMilli()
		s, en := strconv.FormatInt(start, 10), strconv.FormatInt(start+5*60000, 10)
		// The video's thumbnail is the first minute thumbnail from its start.
		e.put(storage.MinuteThumbKey(c, time.UnixMilli(start).Add(-time.Minute)), "before")
		e.put(storage.MinuteThumbKey(c, time.UnixMilli(start)), "at start")
		// Query parameters, as the sample passes them.
		r := e.do("POST", "/v2/api/drives?token="+tok+"&camera_id="+c+"&start_at="+s+"&end_at="+en+"&description=door", nil).want(t, 200)
		body := r.obj(t)
		data := body["data"].(map[string]any)
		if body["code"] != float64(0) || body["msg"] == "" || data["status"] != float64(0) || data["create_user_id"] != float64(userID) ||
			data["StartDateF"] != time.UnixMilli(start).UTC().Format(layoutBR) || data["UrlDrive"] != "" || data["camera_name"] != "Cam" {
			t.Fatalf("create: %s", r.body)
		}
		ca := data["created_at"].(map[string]any)
		if ca["timezone_type"] != float64(3) || ca["timezone"] != "UTC" || len(ca["date"].(string)) != len(layoutPHP) {
			t.Fatalf("created_at: %v", ca)
		}
		if u, ok := body["video_thumb"].(string); !ok {
			t.Fatal("video_thumb missing")
		} else if got := fetch(t, u); got != "at start" {
			t.Fatalf("video_thumb serves %q, want the thumbnail at the start", got)
		}
		id := strconv.FormatInt(int64(data["id"].(float64)), 10)
		if len(e.exp.jobs) != 1 || e.exp.jobs[0].ID != id || e.exp.jobs[0].Camera != c || e.exp.jobs[0].StartMs != start {
			t.Fatalf("job: %+v", e.exp.jobs)
		}
		// JSON body too.
		r = e.do("POST", "/v2/api/drives", map[string]any{"token": tok, "camera_id": c, "start_at": start, "end_at": start + 1000, "description": "json"}).want(t, 200)
		id2 := strconv.FormatInt(int64(r.obj(t)["data"].(map[string]any)["id"].(float64)), 10)
		// Invalid: end before start, too long, missing.
		r = e.do("POST", "/v2/api/drives?token="+tok+"&camera_id="+c+"&start_at="+en+"&end_at="+s, nil).want(t, 422)
		if _, ok := r.obj(t)["errors"].(map[string]any)["description"]; !ok {
			t.Fatalf("422: %s", r.body)
		}
		e.do("POST", "/v2/api/drives?token="+tok+"&camera_id="+c+"&start_at=0&end_at=99999999&description=x", nil).want(t, 422)

		// The job finishes: listing shows status 1 and a working url.
		e.put(storage.VideoKey(id), "the video")
		e.exp.mu.Lock()
		e.exp.state[id] = JobState{Status: 1}
		e.exp.mu.Unlock()
		r = e.do("GET", "/v2/api/drives?token="+tok, nil).want(t, 200)
		list := r.obj(t)["data"].([]any)
		if len(list) != 2 {
			t.Fatalf("list: %s", r.body)
		}
		var done map[string]any
		for _, v := range list {
			if m := v.(map[string]any); strconv.FormatInt(int64(m["id"].(float64)), 10) == id {
				done = m
			}
		}
		if done["status"] != float64(1) || done["tsStart"] != float64(start) || done["startDateF"] != time.UnixMilli(start).UTC().Format(layoutDateTime) {
			t.Fatalf("listed: %v", done)
		}
		if got := fetch(t, done["url"].(string)); got != "the video" {
			t.Fatalf("video url serves %q", got)
		}
		r = e.do("GET", "/v2/api/drives?token="+tok+"&ids="+id2, nil).want(t, 200)
		if l := r.obj(t)["data"].([]any); len(l) != 1 || l[0].(map[string]any)["status"] != float64(0) {
			t.Fatalf("ids filter: %s", r.body)
		}
		e.do("GET", "/v2/api/drives?token="+tok+"&ids=1,x", nil).want(t, 422)

		// Remove: code 0 and an empty list; the object is gone; again 404.
		r = e.do("POST", "/v2/api/drives/delete/"+id+"?token="+tok, nil).want(t, 200)
		if m := r.obj(t); m["code"] != float64(0) || len(m["data"].([]any)) != 0 {
			t.Fatalf("delete: %s", r.body)
		}
		if _, err := e.store.Stat(t.Context(), storage.VideoKey(id)); err == nil {
			t.Fatal("video object still stored")
		}
		e.do("POST", "/v2/api/drives/delete/"+id+"?token="+tok, nil).want(t, 404)
	})
}

func TestEventsFromNATS(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		clientA, _, tokA := e.clientWithUser("ev-a@example.com")
		clientB, _, _ := e.clientWithUser("ev-b@example.com")
		camA, camB := e.camera(clientA), e.camera(clientB)
		ctx := t.Context()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = e.bus.ConsumeEvents(ctx, "api-events", func(ctx context.Context, ev bus.Event) error {
				return e.srv.StoreEvent(ctx, EventIn{ID: ev.ID, Camera: ev.Camera, Type: ev.Type, At: time.UnixMilli(ev.AtMs), ImageKey: ev.ImageKey})
			})
		}()
		day := time.Date(2025, 3, 9, 0, 0, 0, 0, time.UTC)
		pub := func(id string, cam int64, typ int, at time.Time) {
			key := storage.EventImageKey(camID(cam), id)
			e.put(key, "img")
			publishEvent(t, e.bus, bus.Event{ID: id, Camera: camID(cam), Type: typ, AtMs: at.UnixMilli(), ImageKey: key})
		}
		for i := 0; i < 35; i++ {
			pub("a"+strconv.Itoa(i), camA, []int{5, 1}[i%2], day.Add(time.Duration(i)*time.Minute))
		}
		pub("a0", camA, 5, day) // a duplicate id outside the window: stored once
		pub("b0", camB, 5, day)
		pub("late", camA, 5, day.Add(48*time.Hour))
		publishEvent(t, e.bus, bus.Event{ID: "static", Camera: "synth-1", Type: 5, AtMs: day.UnixMilli()})
		var page map[string]any
		testenv.WaitForNil(t, 20*time.Second, "35 events stored", func() error {
			r := e.do("GET", "/api/v1/events?token="+tokA+"&start_at=2025-03-09&end_at=2025-03-09", nil).want(t, 200)
			list := r.json(t).([]any)
			if len(list) != 1 {
				t.Fatalf("events body is not a list of one page: %s", r.body)
			}
			page = list[0].(map[string]any)
			if page["total"] != float64(35) {
				return fmt.Errorf("total %v", page["total"])
			}
			return nil
		})
		data := page["data"].([]any)
		if page["per_page"] != float64(30) || page["last_page"] != float64(2) || len(data) != 30 {
			t.Fatalf("page: %v", page)
		}
		ev := data[0].(map[string]any)
		if ev["event_at"] != day.Add(34*time.Minute).Format(layoutEvent) || ev["event_type"] != float64(5) ||
			ev["event_description"] != "motion detection" || ev["camera_id"] != float64(camA) || ev["camera_description"] != "Cam" {
			t.Fatalf("event: %v", ev)
		}
		if got := fetch(t, ev["event_url"].(string)); got != "img" {
			t.Fatalf("event image: %q", got)
		}
		r := e.do("GET", "/api/v1/events?token="+tokA+"&start_at=2025-03-09&end_at=2025-03-09&page=2&event_types=1", nil).want(t, 200)
		if p := r.json(t).([]any)[0].(map[string]any); p["total"] != float64(17) || len(p["data"].([]any)) != 0 {
			t.Fatalf("types filter page 2: %s", r.body)
		}
		// Camera B's event was published after A's 35: the consumer may
		// not have stored it yet.
		testenv.WaitForNil(t, 20*time.Second, "camera B's event stored", func() error {
			r := e.do("GET", op("/api/v1/events?start_at=2025-03-09&end_at=2025-03-11&camera="+camID(camB)), nil).want(t, 200)
			if p := r.json(t).([]any)[0].(map[string]any); p["total"] != float64(1) {
				return fmt.Errorf("operator camera filter: %s", r.body)
			}
			return nil
		})
		r = e.do("GET", "/api/v1/events?token="+tokA+"&start_at=09/03/2025&end_at=2025-03-09&event_types=3", nil).want(t, 422)
		var bad struct{ Errors map[string][]string }
		_ = json.Unmarshal(r.body, &bad)
		keys := []string{}
		for k := range bad.Errors {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if strings.Join(keys, ",") != "event_types,start_at" {
			t.Fatalf("422 fields %v", keys)
		}
		e.do("GET", "/api/v1/events?start_at=2025-03-09&end_at=2025-03-09", nil).want(t, http.StatusUnauthorized)
	})
}

func TestDigestGrace(t *testing.T) {
	e := newEnv(t, "sqlite", func(c *Config) { c.DigestGrace = 30 * time.Minute })
	clientID, _, tok := e.clientWithUser("grace@example.com")
	id := e.camera(clientID)
	c := camID(id)
	e.clock.Set(time.Date(2025, 3, 10, 23, 50, 0, 0, time.UTC))
	d := e.digest(PurposeDigest, id)
	url := func() string {
		return "/api/camera/" + c + "/thumbs-minutes?token=" + tok + "&digest=" + d + "&ts=" + strconv.FormatInt(e.clock.Now().Unix(), 10)
	}
	e.do("GET", url(), nil).want(t, 200)
	e.clock.Set(time.Date(2025, 3, 11, 0, 20, 0, 0, time.UTC)) // within the grace
	e.do("GET", url(), nil).want(t, 200)
	e.clock.Set(time.Date(2025, 3, 11, 0, 31, 0, 0, time.UTC)) // past it
	e.do("GET", url(), nil).want(t, 403)
	if e.digest(PurposeDigest, id) == e.digest(PurposePlayer, id) || e.digest(PurposeDigest, id) == d {
		t.Fatal("digests must differ by purpose and day")
	}
}
