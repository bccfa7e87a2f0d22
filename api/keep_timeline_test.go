package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/storage"
)

// Video older than history_days, kept around an event, is on the timeline
// with where history_days begin, which the player marks as kept.
func TestPlayerTimelineKept(t *testing.T) {
	e := newEnv(t, "sqlite", nil)
	clientID, _, tok := e.clientWithUser("kept@example.com")
	c := camID(e.camera(clientID)) // history_days 7
	now := e.clock.Now()
	start := now.Add(-9 * 24 * time.Hour).Truncate(time.Hour)
	if err := e.store.Put(context.Background(), storage.SegmentKey(c, start, time.Minute, 4), strings.NewReader("initsegment"), 11,
		storage.PutOptions{Metadata: map[string]string{catalogue.MetaInitSize: "4"}}); err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf("/api/camera/%s/player/timeline?token=%s&from=%d&to=%d", c, tok, start.UnixMilli(), start.Add(time.Hour).UnixMilli())
	var tl struct {
		catalogue.Timeline
		RetainedFromMs int64 `json:"retained_from_ms"`
	}
	if err := json.Unmarshal(e.do("GET", q, nil).want(t, 200).body, &tl); err != nil {
		t.Fatal(err)
	}
	want := now.Add(-7 * 24 * time.Hour).Truncate(time.Hour).UnixMilli()
	if tl.RetainedFromMs != want || len(tl.Recorded) != 1 || tl.Recorded[0].StartMs >= tl.RetainedFromMs {
		t.Fatalf("timeline %+v, retained from %d; want the kept minute before %d", tl.Timeline, tl.RetainedFromMs, want)
	}
}
