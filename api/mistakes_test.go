package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sendRaw sends body with the content type ct (none when "") and the
// extra headers.
func (e *env) sendRaw(method, path, ct, body string, header map[string]string) resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.http.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, body: data, header: res.Header}
}

// wantFieldMsg fails unless r is 422 with msg among the messages of field.
func wantFieldMsg(t *testing.T, what string, r resp, field, msg string) {
	t.Helper()
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("%s: status %d, want 422: %s", what, r.status, r.body)
	}
	var body struct {
		Errors map[string][]string `json:"errors"`
		Msg    string              `json:"msg"`
		MSG    string              `json:"MSG"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("%s: %v: %s", what, err, r.body)
	}
	for _, m := range body.Errors[field] {
		if m == msg {
			return
		}
	}
	t.Fatalf("%s: errors of %s lack %q: %s", what, field, msg, r.body)
}

// TestMillisecondsGivenSeconds: a millisecond field given seconds is 422
// saying so, in recordings and downloadable videos.
func TestMillisecondsGivenSeconds(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		clientID, _, tok := e.clientWithUser("seconds@example.com")
		id := e.camera(clientID)
		c := strconv.FormatInt(id, 10)
		now := e.clock.Now()
		secs := strconv.FormatInt(now.Add(-time.Hour).Unix(), 10)
		ms := strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10)
		rec := "/camera/" + c + "/recordings?token=" + tok + "&digest=" + e.digest(PurposeDigest, id) + "&timeStamp="
		wantFieldMsg(t, "recordings in seconds", e.do("GET", rec+secs, nil), "timeStamp", msgSeconds)
		e.do("GET", rec+ms, nil).want(t, 200)
		wantFieldMsg(t, "recordings before 1970", e.do("GET", rec+"-1", nil), "timeStamp", "must be Unix milliseconds")

		drive := func(start, end int64) resp {
			return e.do("POST", "/v2/api/drives?token="+tok, map[string]any{"camera_id": id, "start_at": start, "end_at": end, "description": "d"})
		}
		s := now.Add(-time.Hour)
		r := drive(s.Unix(), s.Add(time.Minute).Unix())
		wantFieldMsg(t, "video start in seconds", r, "start_at", msgSeconds)
		wantFieldMsg(t, "video end in seconds", r, "end_at", msgSeconds)
		wantFieldMsg(t, "video end in seconds", drive(s.UnixMilli(), s.Add(time.Minute).Unix()), "end_at", msgSeconds)
		wantFieldMsg(t, "video start in seconds", drive(s.Unix(), s.Add(time.Minute).UnixMilli()), "start_at", msgSeconds)
		drive(s.UnixMilli(), s.Add(time.Minute).UnixMilli()).want(t, 200)

		// The player's highlight ranges.
		page := "/api/camera/" + c + "/player?token=" + tok
		r = e.do("GET", page+"&start_ts="+secs+"&end_ts="+strconv.FormatInt(now.Unix(), 10), nil)
		wantFieldMsg(t, "player start_ts in seconds", r, "start_ts", msgSeconds)
		wantFieldMsg(t, "player end_ts in seconds", r, "end_ts", msgSeconds)
		r = e.do("GET", page+"&start_timestamps[]="+ms+"&start_timestamps[]="+secs+"&end_timestamps[]="+ms+"&end_timestamps[]="+ms, nil)
		wantFieldMsg(t, "player start_timestamps in seconds", r, "start_timestamps[1]", msgSeconds)
		e.do("GET", page+"&start_ts="+ms+"&end_ts="+strconv.FormatInt(now.UnixMilli(), 10), nil).want(t, 200)
		// The first millisecond of 2001 is taken.
		e.clock.Set(time.UnixMilli(minMillis).Add(time.Hour))
		drive(minMillis, minMillis+1000).want(t, 200)
	})
}

// TestJSONWithoutContentType: a JSON object sent as a form (curl -d) is
// read as JSON; one that does not decode is refused naming JSON.
func TestJSONWithoutContentType(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		clientID, _, tok := e.clientWithUser("curl@example.com")
		id := e.camera(clientID)
		start := e.clock.Now().Add(-time.Hour).UnixMilli()
		body := `{"token": "` + tok + `", "camera_id": ` + strconv.FormatInt(id, 10) + `, "start_at": ` + strconv.FormatInt(start, 10) +
			`, "end_at": ` + strconv.FormatInt(start+60000, 10) + `, "description": "curl -d"}`
		for _, ct := range []string{"application/x-www-form-urlencoded", ""} {
			r := e.sendRaw("POST", "/v2/api/drives", ct, body, nil).want(t, 200)
			if d := r.obj(t)["data"].(map[string]any); d["description"] != "curl -d" {
				t.Fatalf("content type %q: %s", ct, r.body)
			}
		}
		r := e.sendRaw("POST", "/v2/api/drives", "application/x-www-form-urlencoded", `{"token": "`+tok+`", }`, nil).want(t, 400)
		if msg := r.obj(t)["msg"].(string); !strings.Contains(msg, "application/json") {
			t.Fatalf("broken JSON as a form: %s", r.body)
		}
		// A true form still is one.
		e.sendRaw("POST", "/v2/api/drives?token="+tok, "application/x-www-form-urlencoded",
			"camera_id="+strconv.FormatInt(id, 10)+"&start_at="+strconv.FormatInt(start, 10)+"&end_at="+strconv.FormatInt(start+1000, 10)+"&description=form", nil).want(t, 200)
	})
}

// TestTokenPlacement: a token in an Authorization header without "Bearer"
// is answered with where the token goes; a missing token too.
func TestTokenPlacement(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, _, tok := e.clientWithUser("bearer@example.com")
		want := "token must be sent as 'Authorization: Bearer <token>' or ?token="
		for _, h := range []string{tok, "Token " + tok, "Bearer"} {
			r := e.sendRaw("GET", "/api/v4/cameras", "", "", map[string]string{"Authorization": h}).want(t, 401)
			if msg := r.obj(t)["msg"]; msg != want {
				t.Fatalf("Authorization %q: %s", h, r.body)
			}
		}
		r := e.do("GET", "/api/v4/cameras", nil).want(t, 401)
		if msg := r.obj(t)["msg"].(string); !strings.Contains(msg, "Authorization: Bearer <token>") || !strings.Contains(msg, "?token=") {
			t.Fatalf("missing token: %s", r.body)
		}
		e.sendRaw("GET", "/api/v4/cameras", "", "", map[string]string{"Authorization": "Bearer " + tok}).want(t, 200)
		e.sendRaw("GET", "/api/v4/cameras", "", "", map[string]string{"Authorization": "bearer " + tok}).want(t, 200)
	})
}

// TestFailedVideoSaysWhy: a downloadable video that failed carries the
// reason in the listing's error field, and keeps it once recorded.
func TestFailedVideoSaysWhy(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		clientID, _, tok := e.clientWithUser("failed@example.com")
		id := e.camera(clientID)
		start := e.clock.Now().Add(-time.Hour).UnixMilli()
		mk := func() string {
			r := e.do("POST", "/v2/api/drives?token="+tok, map[string]any{"camera_id": id, "start_at": start, "end_at": start + 60000, "description": "d"}).want(t, 200)
			return strconv.FormatInt(int64(r.obj(t)["data"].(map[string]any)["id"].(float64)), 10)
		}
		failed, ok := mk(), mk()
		reason := "no recording between 14:30:00 and 14:31:00"
		e.exp.mu.Lock()
		e.exp.state[failed] = JobState{Status: 2, Reason: reason}
		e.exp.state[ok] = JobState{Status: 1}
		e.exp.mu.Unlock()
		list := func() map[string]map[string]any {
			r := e.do("GET", "/v2/api/drives?token="+tok, nil).want(t, 200)
			out := map[string]map[string]any{}
			for _, v := range r.obj(t)["data"].([]any) {
				m := v.(map[string]any)
				out[strconv.FormatInt(int64(m["id"].(float64)), 10)] = m
			}
			return out
		}
		got := list()
		if got[failed]["status"] != float64(2) || got[failed]["error"] != reason {
			t.Fatalf("failed video: %v", got[failed])
		}
		if _, has := got[ok]["error"]; has || got[ok]["status"] != float64(1) {
			t.Fatalf("ready video: %v", got[ok])
		}
		// The job's record expires; the reason stays with the video.
		e.exp.mu.Lock()
		delete(e.exp.state, failed)
		e.exp.mu.Unlock()
		if got := list(); got[failed]["error"] != reason {
			t.Fatalf("after the job expired: %v", got[failed])
		}
	})
}
