package api

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

// TestLegalHolds: the operator places a hold on a camera range and on a
// video, with its reason and who placed it; users cannot; a held video
// cannot be removed until its hold is lifted, with a reason; the listing
// shows both holds with their audit.
func TestLegalHolds(t *testing.T) {
	e := newEnv(t, "sqlite", nil)
	clientID, _, tok := e.clientWithUser("hold@example.com")
	cam := e.camera(clientID)
	c := strconv.FormatInt(cam, 10)
	start := e.clock.Now().Add(-30 * time.Minute).UnixMilli()
	s := strconv.FormatInt(start, 10)
	e.do("POST", "/api/v1/holds?token="+tok, map[string]any{"camera_id": cam, "start_at": start, "end_at": start + 60000, "reason": "x"}).want(t, 403)
	e.do("POST", op("/api/v1/holds"), map[string]any{"camera_id": cam, "start_at": start, "end_at": start + 60000}).want(t, 422)
	r := e.do("POST", op("/api/v1/holds"), map[string]any{"camera_id": cam, "start_at": start, "end_at": start + 60000, "reason": "police case 12"}).want(t, 201)
	h := r.obj(t)
	if h["active"] != true || h["reason"] != "police case 12" || !strings.HasPrefix(h["placed_by"].(string), "operator:") || h["camera_id"] != float64(cam) {
		t.Fatalf("hold: %s", r.body)
	}
	if strings.Contains(string(r.body), testOperator) {
		t.Fatal("the operator token is in the audit")
	}

	r = e.do("POST", "/v2/api/drives?token="+tok+"&camera_id="+c+"&start_at="+s+"&end_at="+strconv.FormatInt(start+60000, 10)+"&description=x", nil).want(t, 200)
	vid := int64(r.obj(t)["data"].(map[string]any)["id"].(float64))
	e.put(storage.VideoKey(strconv.FormatInt(vid, 10)), "the video")
	r = e.do("POST", op("/api/v1/holds"), map[string]any{"video_id": vid, "reason": "insurer claim"}).want(t, 201)
	hv := int64(r.obj(t)["id"].(float64))
	e.do("POST", "/v2/api/drives/delete/"+strconv.FormatInt(vid, 10)+"?token="+tok, nil).want(t, 409)

	lift := "/api/v1/holds/" + strconv.FormatInt(hv, 10) + "/lift"
	e.do("POST", op(lift), map[string]any{}).want(t, 422)
	r = e.do("POST", op(lift), map[string]any{"reason": "claim settled"}).want(t, 200)
	if l := r.obj(t); l["active"] != false || l["lift_reason"] != "claim settled" || l["lifted_at"] == nil {
		t.Fatalf("lifted: %s", r.body)
	}
	e.do("POST", op(lift), map[string]any{"reason": "again"}).want(t, 404)
	e.do("POST", "/v2/api/drives/delete/"+strconv.FormatInt(vid, 10)+"?token="+tok, nil).want(t, 200)

	r = e.do("GET", op("/api/v1/holds"), nil).want(t, 200)
	if l := r.json(t).([]any); len(l) != 2 {
		t.Fatalf("holds: %s", r.body)
	}
	r = e.do("GET", op("/api/v1/holds?active=1"), nil).want(t, 200)
	if l := r.json(t).([]any); len(l) != 1 || l[0].(map[string]any)["reason"] != "police case 12" {
		t.Fatalf("holds in force: %s", r.body)
	}
}
