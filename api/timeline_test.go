package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// The player's timeline: recorded spans, gaps by cause (from the records
// beside the segments; retention before history_days), the covered time,
// and the camera's events; then its minute thumbnails.
func TestPlayerTimeline(t *testing.T) {
	e := newEnv(t, "sqlite", nil)
	clientID, _, tok := e.clientWithUser("timeline@example.com")
	id := e.camera(clientID) // history_days 7
	c := camID(id)
	now := e.clock.Now()
	seg := func(start time.Time, d time.Duration) {
		if err := e.store.Put(context.Background(), storage.SegmentKey(c, start, d, 4), strings.NewReader("initsegment"), 11,
			storage.PutOptions{Metadata: map[string]string{catalogue.MetaInitSize: "4"}}); err != nil {
			t.Fatal(err)
		}
	}
	gap := func(start time.Time, d time.Duration, cause status.Cause) {
		if err := e.store.Put(context.Background(), storage.GapKey(c, start, d, string(cause)), strings.NewReader("{}"), 2, storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := now.Add(-time.Hour).Truncate(time.Hour) // 14:00
	seg(t0, time.Minute)
	seg(t0.Add(time.Minute), time.Minute)
	gap(t0.Add(2*time.Minute), 0, status.CauseCameraOffline)
	seg(t0.Add(5*time.Minute), time.Minute)
	gap(t0.Add(6*time.Minute), 30*time.Second, status.CauseSpoolQuota)
	seg(t0.Add(6*time.Minute+30*time.Second), 30*time.Second)
	for _, at := range []time.Duration{90 * time.Second, 5 * time.Minute} {
		if _, err := e.db.AddEvent(context.Background(), db.Event{UID: fmt.Sprint("ev-", at), CameraID: id, ClientID: clientID, Type: 5,
			At: t0.Add(at)}, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.db.AddEvent(context.Background(), db.Event{UID: "plate-1", CameraID: id, ClientID: clientID, Type: lprEventType,
		At: t0.Add(7 * time.Minute)}, now); err != nil {
		t.Fatal(err)
	}
	if err := e.db.AddPlate(context.Background(), "plate-1", db.Plate{Plate: "BRA2E19", Confidence: 97}); err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf("/api/camera/%s/player/timeline?token=%s&from=%d&to=%d", c, tok, t0.UnixMilli(), t0.Add(8*time.Minute).UnixMilli())
	var tl struct {
		catalogue.Timeline
		Events []player.Event `json:"events"`
	}
	if err := json.Unmarshal(e.do("GET", q, nil).want(t, 200).body, &tl); err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) int64 { return t0.Add(d).UnixMilli() }
	wantGaps := []catalogue.Gap{
		{StartMs: ms(2 * time.Minute), EndMs: ms(5 * time.Minute), Cause: status.CauseCameraOffline},
		{StartMs: ms(6 * time.Minute), EndMs: ms(6*time.Minute + 30*time.Second), Cause: status.CauseSpoolQuota},
		{StartMs: ms(7 * time.Minute), EndMs: ms(8 * time.Minute), Cause: status.CauseUnknown},
	}
	if fmt.Sprint(tl.Gaps) != fmt.Sprint(wantGaps) || tl.RecordedMs != 210_000 || len(tl.Recorded) != 3 {
		t.Errorf("timeline %+v\nwant gaps %v and 3.5 minutes recorded", tl.Timeline, wantGaps)
	}
	if len(tl.Events) != 3 || tl.Events[0].AtMs != ms(90*time.Second) || tl.Events[1].Description != "motion detection" ||
		tl.Events[1].Label != "" || tl.Events[2].Type != lprEventType || tl.Events[2].Label != "BRA2E19" {
		t.Errorf("events %+v, want two motions and a plate read with its plate", tl.Events)
	}

	// Eight days ago, past history_days: retention.
	old := now.Add(-8 * 24 * time.Hour)
	q = fmt.Sprintf("/api/camera/%s/player/timeline?token=%s&from=%d&to=%d", c, tok, old.UnixMilli(), old.Add(time.Hour).UnixMilli())
	if err := json.Unmarshal(e.do("GET", q, nil).want(t, 200).body, &tl); err != nil {
		t.Fatal(err)
	}
	if len(tl.Gaps) != 1 || tl.Gaps[0].Cause != status.CauseRetention {
		t.Errorf("past history_days: %+v, want one retention gap", tl.Gaps)
	}

	// Bad ranges, and another client's user.
	for _, bad := range []string{"from=x&to=1", fmt.Sprintf("from=%d&to=%d", ms(time.Hour), ms(0)),
		fmt.Sprintf("from=0&to=%d", ms(0))} {
		e.do("GET", "/api/camera/"+c+"/player/timeline?token="+tok+"&"+bad, nil).want(t, 400)
	}
	otherClient, _, other := e.clientWithUser("other@example.com")
	_ = otherClient
	if r := e.do("GET", "/api/camera/"+c+"/player/timeline?token="+other+"&from=0&to=1", nil); r.status != 404 && r.status != 403 {
		t.Errorf("another client's user: status %d", r.status)
	}

	// Minute thumbnails of the range, in order, signed.
	e.put(storage.MinuteThumbKey(c, t0.Add(2*time.Minute)), "b")
	e.put(storage.MinuteThumbKey(c, t0.Add(time.Minute)), "a")
	e.put(storage.MinuteThumbKey(c, t0.Add(-time.Minute)), "before")
	var thumbs []player.Thumb
	q = fmt.Sprintf("/api/camera/%s/player/thumbs?token=%s&from=%d&to=%d", c, tok, t0.UnixMilli(), t0.Add(time.Hour).UnixMilli())
	if err := json.Unmarshal(e.do("GET", q, nil).want(t, 200).body, &thumbs); err != nil {
		t.Fatal(err)
	}
	if len(thumbs) != 2 || thumbs[0].TS != t0.Add(time.Minute).Unix() || !strings.Contains(thumbs[1].URL, "sig=") {
		t.Errorf("thumbs %+v", thumbs)
	}
	e.do("GET", fmt.Sprintf("/api/camera/%s/player/thumbs?token=%s&from=0&to=%d", c, tok, 7*3600*1000), nil).want(t, 400)
}

// Blocking a client records camera_blocked for each of its cameras, from
// the moment of the block.
func TestBlockingRecordsGaps(t *testing.T) {
	var got []status.Gap
	e := newEnv(t, "sqlite", func(c *Config) { c.OnGap = func(g status.Gap) { got = append(got, g) } })
	clientID, _, _ := e.clientWithUser("blocked@example.com")
	a, b := e.camera(clientID), e.camera(clientID)
	c, err := e.db.Client(context.Background(), clientID)
	if err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/api/client/block/"+testOperator+"/"+c.DocumentNumber, nil).want(t, 200)
	now := e.clock.Now().UnixMilli()
	want := []status.Gap{{Camera: camID(a), StartMs: now, Cause: status.CauseCameraBlocked}, {Camera: camID(b), StartMs: now, Cause: status.CauseCameraBlocked}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records %+v, want %+v", got, want)
	}
	e.do("GET", "/api/client/unblock/"+testOperator+"/"+c.DocumentNumber, nil).want(t, 200)
	if len(got) != 2 {
		t.Errorf("unblocking recorded %d more", len(got)-2)
	}
}
