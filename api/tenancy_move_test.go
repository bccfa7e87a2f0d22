package api

import (
	"context"
	"net/url"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

// TestTenancyAfterMove moves a camera from client A to client B, stores
// the camera's video, pictures and an event after the move, and walks
// every route of the interface as A's user, with A's token and with the
// digests A was given before the move. No answer (nor what a redirect
// leads to) may name anything of the camera made after the move, nor its
// new name.
func TestTenancyAfterMove(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		clientA, userA, tokA := e.clientWithUser("mover-a@example.com")
		clientB, _, tokB := e.clientWithUser("mover-b@example.com")
		id := e.camera(clientA)
		c := strconv.FormatInt(id, 10)

		// Before the move: A's picture, segment, event and a video whose
		// range reaches past the move.
		before := e.clock.Now()
		e.put(storage.MinuteThumbKey(c, before.Add(-40*time.Minute)), "before")
		e.put(storage.SegmentKey(c, before.Add(-5*time.Minute), time.Minute, 4), "before")
		e.put(storage.SnapshotKey(c, before.Add(-time.Minute)), "before")
		if err := e.srv.StoreEvent(ctx, EventIn{ID: "before-move", Camera: c, Type: 1, At: before.Add(-time.Minute)}); err != nil {
			t.Fatal(err)
		}
		start := before.Add(-10 * time.Minute).UnixMilli()
		r := e.do("POST", "/v2/api/drives?token="+tokA+"&camera_id="+c+"&start_at="+strconv.FormatInt(start, 10)+
			"&end_at="+strconv.FormatInt(before.Add(5*time.Minute).UnixMilli(), 10)+"&description=mine", nil).want(t, 200)
		video := strconv.FormatInt(int64(r.obj(t)["data"].(map[string]any)["id"].(float64)), 10)
		e.exp.mu.Lock()
		job := e.exp.jobs[len(e.exp.jobs)-1]
		e.exp.state[video] = JobState{Status: 1, Key: storage.VideoKey(video)}
		e.exp.mu.Unlock()
		if job.EndMs > before.UnixMilli() {
			t.Errorf("the export job reaches %v, past its request at %v", time.UnixMilli(job.EndMs), before)
		}
		e.put(storage.VideoKey(video), "A's video")
		dA, hA := e.digest(PurposeDigest, id), e.digest(PurposeHash, id)
		pdA := e.signDigest(testKeys, PurposePlayer, id, e.clock.Now(), userA)
		lprKey := path.Base(e.srv.lprURL(id))

		// The move, then the camera's life with B.
		e.clock.Set(before.Add(time.Minute))
		moved := rtspCamera(clientB, "203.0.113.7")
		moved["description"] = "Moved-Secret-Name"
		e.do("PUT", op("/api/v1/cameras/"+c), moved).want(t, 201)
		after := before.Add(time.Minute + 17*time.Second)
		afterKeys := []string{
			storage.MinuteThumbKey(c, after),
			storage.SegmentKey(c, after, 10*time.Second, 4),
			storage.SnapshotKey(c, after),
			storage.EventImageKey(c, "after-move"),
		}
		for _, k := range afterKeys {
			e.put(k, "after-move-content")
		}
		if err := e.srv.StoreEvent(ctx, EventIn{ID: "after-move", Camera: c, Type: 1, At: after, ImageKey: afterKeys[3]}); err != nil {
			t.Fatal(err)
		}
		e.clock.Set(after.Add(43 * time.Second))
		markers := []string{"Moved-Secret-Name", "after-move-content", "after-move", strconv.FormatInt(after.Unix(), 10)}
		for _, k := range afterKeys {
			markers = append(markers, k, path.Base(k), url.PathEscape(k), url.QueryEscape(k))
		}

		now := e.clock.Now()
		ts, ms := strconv.FormatInt(now.Unix(), 10), strconv.FormatInt(before.Add(-10*time.Minute).UnixMilli(), 10)
		day := now.Format("2006-01-02")
		segFile := path.Base(afterKeys[1])
		a := "token=" + tokA
		walk := map[string][]string{
			"POST /api/v1/clients":                       {"/api/v1/clients?" + a},
			"POST /api/v1/clients/{client_id}/users":     {"/api/v1/clients/" + strconv.FormatInt(clientA, 10) + "/users?" + a},
			"GET /api/client/block/{token}/{document}":   {"/api/client/block/" + tokA + "/" + cnpj()},
			"GET /api/client/unblock/{token}/{document}": {"/api/client/unblock/" + tokA + "/" + cnpj()},
			"GET /api/user/block/{token}/{id}":           {"/api/user/block/" + tokA + "/999999"},
			"GET /api/user/unblock/{token}/{id}":         {"/api/user/unblock/" + tokA + "/999999"},
			"POST /api/v1/auth/token":                    {"/api/v1/auth/token?email=mover-a@example.com&password=password1"},
			"GET /api/v1/cameras/create":                 {"/api/v1/cameras/create?" + a},
			"POST /api/v1/cameras":                       {"/api/v1/cameras?" + a},
			"PUT /api/v1/cameras/{id}":                   {"/api/v1/cameras/" + c + "?" + a},
			"POST /api/v1/cameras/{id}/push-key":         {"/api/v1/cameras/" + c + "/push-key?" + a},
			"GET /api/v1/events":                         {"/api/v1/events?" + a + "&start_at=" + day + "&end_at=" + day, "/api/v1/events?" + a + "&start_at=" + day + "&end_at=" + day + "&camera=" + c},
			"POST /api/v1/lpr/{id}/{key}":                {"/api/v1/lpr/" + c + "/" + lprKey},
			"GET /api/v4/cameras":                        {"/api/v4/cameras?" + a, "/api/v4/cameras?" + a + "&p=hls"},
			"GET /api/camera-player/{id}":                {"/api/camera-player/" + c + "?" + a},
			"GET /api/camera/{id}/player":                {"/api/camera/" + c + "/player?" + a, "/api/camera/" + c + "/player?player_digest=" + pdA},
			"GET /api/camera/{id}/player/live-url":       {"/api/camera/" + c + "/player/live-url?" + a, "/api/camera/" + c + "/player/live-url?player_digest=" + pdA},
			"GET /api/camera/{id}/player/timeline":       {"/api/camera/" + c + "/player/timeline?" + a + "&from=0&to=" + ts, "/api/camera/" + c + "/player/timeline?player_digest=" + pdA},
			"GET /api/camera/{id}/player/videos":         {"/api/camera/" + c + "/player/videos?" + a, "/api/camera/" + c + "/player/videos?player_digest=" + pdA},
			"GET /api/camera/{id}/player/thumbs":         {"/api/camera/" + c + "/player/thumbs?" + a + "&ts=" + ts, "/api/camera/" + c + "/player/thumbs?player_digest=" + pdA + "&ts=" + ts},
			"GET /api/camera/{id}/vod.m3u8":              {"/api/camera/" + c + "/vod.m3u8?" + a + "&from=" + ms + "&to=" + strconv.FormatInt(now.UnixMilli(), 10), "/api/camera/" + c + "/vod.m3u8?player_digest=" + pdA + "&from=" + ms + "&to=" + strconv.FormatInt(now.UnixMilli(), 10)},
			"GET /api/camera/{id}/segment/{file}":        {"/api/camera/" + c + "/segment/" + segFile + "?" + a, "/api/camera/" + c + "/segment/" + segFile + "?player_digest=" + pdA},
			"GET /api/camera/{id}/segment-h264/{file}":   {"/api/camera/" + c + "/segment-h264/" + segFile + "?" + a, "/api/camera/" + c + "/segment-h264/" + segFile + "?player_digest=" + pdA},
			"GET /api/player/":                           {"/api/player/"},
			"GET /camera/{id}/recordings":                {"/camera/" + c + "/recordings?" + a + "&id=" + c + "&digest=" + dA + "&timeStamp=" + ms, "/camera/" + c + "/recordings?" + a + "&id=" + c + "&hash=" + hA + "&timeStamp=" + ms},
			"GET /cameras/{id}/recordings/{$}":           {"/cameras/" + c + "/recordings/?" + a + "&id=" + c + "&digest=" + dA + "&timeStamp=" + ms},
			"GET /api/camera/{id}/thumbs-hourly":         {"/api/camera/" + c + "/thumbs-hourly?" + a + "&id=" + c + "&digest=" + dA + "&ts=" + ts},
			"GET /api/camera/{id}/thumbs-minutes":        {"/api/camera/" + c + "/thumbs-minutes?" + a + "&id=" + c + "&digest=" + dA + "&ts=" + ts},
			"GET /api/camera/{id}/live-url":              {"/api/camera/" + c + "/live-url?" + a},
			"POST /api/camera/{id}/live-url":             {"/api/camera/" + c + "/live-url?" + a},
			"GET /api/cameras/{id}/live-url/{$}":         {"/api/cameras/" + c + "/live-url/?" + a},
			"POST /api/cameras/{id}/live-url/{$}":        {"/api/cameras/" + c + "/live-url/?" + a},
			"POST /v2/api/drives":                        {"/v2/api/drives?" + a + "&camera_id=" + c + "&start_at=" + ms + "&end_at=" + strconv.FormatInt(now.UnixMilli(), 10) + "&description=x"},
			"GET /v2/api/drives":                         {"/v2/api/drives?" + a, "/v2/api/drives?" + a + "&ids=" + video},
			"POST /v2/api/drives/delete/{id}":            {"/v2/api/drives/delete/999999?" + a},
			"GET /api/v1/cameras/{id}/print":             {"/api/v1/cameras/" + c + "/print?" + a, "/api/v1/cameras/" + c + "/print?" + a + "&ts=" + strconv.FormatInt(after.Unix(), 10), "/api/v1/cameras/" + c + "/print?" + a + "&digest=" + dA},
			"POST /api/v1/cameras/{id}/print":            {"/api/v1/cameras/" + c + "/print?" + a},
			"GET /api/openapi.json":                      {"/api/openapi.json"},
			"GET /api/v1/keys/export.pub":                {"/api/v1/keys/export.pub"},
			"POST /api/v1/holds":                         {"/api/v1/holds?" + a + "&camera_id=" + c},
			"GET /api/v1/holds":                          {"/api/v1/holds?" + a},
			"POST /api/v1/holds/{id}/lift":               {"/api/v1/holds/1/lift?" + a},
		}
		sent := 0
		for _, rt := range Routes() {
			name := rt.Method + " " + rt.Pattern
			paths, ok := walk[name]
			if !ok {
				t.Errorf("route %s is not walked: add it to this test", name)
				continue
			}
			delete(walk, name)
			for _, p := range paths {
				r := e.do(rt.Method, p, nil)
				sent++
				for _, m := range markers {
					if strings.Contains(string(r.body), m) {
						t.Errorf("%s %s answered %d naming %q of the camera since its move: %.400s", rt.Method, p, r.status, m, r.body)
					}
				}
			}
		}
		for name := range walk {
			t.Errorf("walked route %s is not a route", name)
		}
		t.Logf("%d requests over %d routes as the client the camera left", sent, len(Routes()))

		// A still has its own video and event, without the camera's present.
		r = e.do("GET", "/v2/api/drives?token="+tokA, nil).want(t, 200)
		if data := r.obj(t)["data"].([]any); len(data) != 1 || data[0].(map[string]any)["url"] == "" {
			t.Errorf("A's videos after the move: %s", r.body)
		}
		r = e.do("GET", "/api/v1/events?token="+tokA+"&start_at="+day+"&end_at="+day, nil).want(t, 200)
		if !strings.Contains(string(r.body), `"total":1`) {
			t.Errorf("A's events after the move: %s", r.body)
		}
		// The markers are real: B, the camera's client now, gets them.
		r = e.do("GET", "/api/v4/cameras?token="+tokB, nil).want(t, 200)
		if !strings.Contains(string(r.body), "Moved-Secret-Name") || !strings.Contains(string(r.body), path.Base(afterKeys[0])) {
			t.Errorf("B's listing lacks the camera's name or picture: %s", r.body)
		}
	})
}
