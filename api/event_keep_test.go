package api

import (
	"context"
	"testing"
)

func TestCameraEventKeepDays(t *testing.T) {
	e := newEnv(t, "sqlite", nil)
	clientID, _, _ := e.clientWithUser("keep@example.com")
	in := rtspCamera(clientID, "203.0.113.7")
	in["event_keep_days"] = 400_000
	e.do("POST", op("/api/v1/cameras"), in).want(t, 422)
	in["event_keep_days"] = 30
	r := e.do("POST", op("/api/v1/cameras"), in).want(t, 201)
	id := int64(r.json(t).([]any)[0].(map[string]any)["id"].(float64))
	other := e.camera(clientID)
	keep, err := e.db.EventKeepDays(context.Background())
	if err != nil || keep[id] != 30 || len(keep) != 1 {
		t.Fatalf("event keep days %v %v, want camera %d: 30 only", keep, err, id)
	}
	// An update changes it; one without the field leaves it.
	in["event_keep_days"] = 0
	e.do("PUT", op("/api/v1/cameras/"+camID(id)), in).want(t, 201)
	delete(in, "event_keep_days")
	e.do("PUT", op("/api/v1/cameras/"+camID(other)), in).want(t, 201)
	if keep, _ = e.db.EventKeepDays(context.Background()); keep[id] != 0 || len(keep) != 1 {
		t.Fatalf("after updates: %v", keep)
	}
}
