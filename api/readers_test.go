package api

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

// listCounter counts the store's LIST calls.
type listCounter struct {
	storage.Store
	lists atomic.Int64
}

func (c *listCounter) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error) {
	c.lists.Add(1)
	return c.Store.List(ctx, prefix, opts)
}

// TestReadersCost: the LIST calls of a camera's month of timeline before
// the bounds (no cache, 31-day ranges) and with them (ranges capped, 400
// past them; past hours' listings kept); and the per-viewer rate limit of
// the listing routes, 429 naming its keys, per user, the operator token
// exempt.
func TestReadersCost(t *testing.T) {
	var counter *listCounter
	build := func(r ReaderLimits) *env {
		return newEnv(t, "sqlite", func(c *Config) {
			counter = &listCounter{Store: c.Store}
			c.Store, c.Readers = counter, r
		})
	}
	month := 31 * 24 * time.Hour
	seed := func(e *env) (cam, tok, tok2 string) {
		clientID, _, tok := e.clientWithUser("reader-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "@example.com")
		cam = camID(e.camera(clientID))
		now := e.clock.Now()
		for h := time.Duration(0); h < month; h += time.Hour {
			e.put(storage.SegmentKey(cam, now.Add(-h).Truncate(time.Hour), time.Minute, 4), "seg")
		}
		e.do("POST", op("/api/v1/clients/"+strconv.FormatInt(clientID, 10)+"/users"), map[string]any{
			"name": "Second", "email": "second-" + cam + tok[:6] + "@example.com", "phone": "3", "user_type": 1, "password": "password3", "password_conf": "password3"}).want(t, 201)
		tok2 = e.do("POST", "/api/v1/auth/token", map[string]any{"email": "second-" + cam + tok[:6] + "@example.com", "password": "password3"}).want(t, 200).obj(t)["api_token"].(string)
		return cam, tok, tok2
	}
	timeline := func(e *env, cam, tok string, span time.Duration) resp {
		to := e.clock.Now()
		return e.do("GET", fmt.Sprintf("/api/camera/%s/player/timeline?token=%s&from=%d&to=%d", cam, tok, to.Add(-span).UnixMilli(), to.UnixMilli()), nil)
	}

	// Before: no cache, the month allowed, each request lists every hour.
	before := build(ReaderLimits{MaxTimelineRange: month, Burst: 1000, Rate: 1000})
	cam, tok, _ := seed(before)
	n0 := counter.lists.Load()
	timeline(before, cam, tok, month).want(t, 200)
	timeline(before, cam, tok, month).want(t, 200)
	monthLists := (counter.lists.Load() - n0) / 2

	// With the bounds (the defaults but the cache's, set as app sets it).
	e := build(ReaderLimits{ListingCache: 200_000})
	cam, tok, tok2 := seed(e)
	if r := timeline(e, cam, tok, month).want(t, 400); !strings.Contains(string(r.body), "168h") {
		t.Errorf("a month of timeline: %s", r.body)
	}
	e.do("GET", fmt.Sprintf("/api/camera/%s/vod.m3u8?token=%s&from=%d&to=%d", cam, tok, e.clock.Now().Add(-25*time.Hour).UnixMilli(), e.clock.Now().UnixMilli()), nil).want(t, 400)
	n0 = counter.lists.Load()
	timeline(e, cam, tok, 7*24*time.Hour).want(t, 200)
	weekFirst := counter.lists.Load() - n0
	n0 = counter.lists.Load()
	timeline(e, cam, tok, 7*24*time.Hour).want(t, 200)
	weekAgain := counter.lists.Load() - n0
	t.Logf("LIST calls of one timeline request: 31 days without the bounds %d; 7 days (the cap) %d, again within the cache's TTL %d",
		monthLists, weekFirst, weekAgain)
	if monthLists < 31*24 || weekAgain > 4 || weekFirst > monthLists/4+8 {
		t.Errorf("LIST calls: month %d, week %d then %d", monthLists, weekFirst, weekAgain)
	}

	// The viewer's rate: 60 at once, then 429 naming the keys; another
	// user and the operator go on.
	e.clock.Set(e.clock.Now().Add(10 * time.Second)) // a full bucket
	got := map[int]int{}
	var last resp
	for range 70 {
		last = e.do("GET", "/api/v4/cameras?token="+tok, nil)
		got[last.status]++
	}
	if got[200] != 60 || got[429] != 10 || !strings.Contains(string(last.body), "api.viewer_rate") || last.header.Get("Retry-After") == "" {
		t.Fatalf("70 listings at once: %v; last %s %v", got, last.body, last.header)
	}
	timeline(e, cam, tok, time.Hour).want(t, 429) // one bucket for the viewer's listing routes
	timeline(e, cam, tok2, time.Hour).want(t, 200)
	for range 70 {
		e.do("GET", op("/api/v4/cameras"), nil).want(t, 200)
	}
	e.clock.Set(e.clock.Now().Add(time.Second))
	for range 10 {
		e.do("GET", "/api/v4/cameras?token="+tok, nil).want(t, 200)
	}
}
