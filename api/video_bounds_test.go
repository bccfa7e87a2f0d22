package api

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

// TestVideoBounds floods POST /v2/api/drives as users of one client:
// videos in the making are bounded per user and per client, requests per
// hour per user (removed videos count), each past its bound with 429
// naming the configuration key; the operator is not bounded.
func TestVideoBounds(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t, kind, func(c *Config) {
				c.Videos = VideoLimits{RunningPerUser: 2, RunningPerClient: 3, PerUserHour: 4, PerClientHour: 6}
			})
			clientID, _, tok := e.clientWithUser("bounds@example.com")
			e.do("POST", op("/api/v1/clients/"+strconv.FormatInt(clientID, 10)+"/users"), map[string]any{
				"name": "Other", "email": "bounds-2@example.com", "phone": "3", "user_type": 1, "password": "password3", "password_conf": "password3"}).want(t, 201)
			tok2 := e.do("POST", "/api/v1/auth/token", map[string]any{"email": "bounds-2@example.com", "password": "password3"}).want(t, 200).obj(t)["api_token"].(string)
			cam := strconv.FormatInt(e.camera(clientID), 10)
			start := e.clock.Now().Add(-2 * time.Hour).UnixMilli()
			create := func(token string) resp {
				return e.do("POST", "/v2/api/drives?token="+token+"&camera_id="+cam+"&start_at="+strconv.FormatInt(start, 10)+
					"&end_at="+strconv.FormatInt(start+3600_000, 10)+"&description=flood", nil)
			}

			// 60 one-hour videos asked for at once by one user: 2 accepted.
			var mu sync.Mutex
			codes := map[int]int{}
			var ids []string
			var wg sync.WaitGroup
			for range 60 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := create(tok)
					mu.Lock()
					defer mu.Unlock()
					codes[r.status]++
					if r.status == 200 {
						ids = append(ids, strconv.FormatInt(int64(r.obj(t)["data"].(map[string]any)["id"].(float64)), 10))
					} else if r.status == 429 && !strings.Contains(string(r.body), "export.max_running_per_user") {
						t.Errorf("429 does not name its limit: %s", r.body)
					}
				}()
			}
			wg.Wait()
			t.Logf("60 videos asked for at once: %v", codes)
			if codes[200] != 2 || codes[429] != 58 {
				t.Fatalf("answers %v, want 2 × 200 and 58 × 429", codes)
			}
			// The client's bound: the other user gets one more, then 429.
			create(tok2).want(t, 200)
			if r := create(tok2).want(t, 429); !strings.Contains(string(r.body), "export.max_running_per_client") {
				t.Fatalf("client bound: %s", r.body)
			}
			// A video made frees its place.
			e.exp.mu.Lock()
			e.exp.state[ids[0]] = JobState{Status: 1}
			e.exp.mu.Unlock()
			create(tok).want(t, 200) // the user's 3rd request this hour
			// Removing videos does not give requests back.
			for _, id := range ids {
				e.do("POST", "/v2/api/drives/delete/"+id+"?token="+tok, nil).want(t, 200)
			}
			create(tok).want(t, 200) // 4th
			e.exp.mu.Lock()
			for _, j := range e.exp.jobs {
				e.exp.state[j.ID] = JobState{Status: 1}
			}
			e.exp.mu.Unlock()
			r := create(tok).want(t, 429)
			if !strings.Contains(string(r.body), "export.max_per_user_hour") || r.header.Get("Retry-After") != "3600" {
				t.Fatalf("hourly bound: %s %v", r.body, r.header)
			}
			// The operator is not bounded; an hour later the user may ask again.
			for range 3 {
				create(testOperator).want(t, 200)
			}
			e.exp.mu.Lock()
			for _, j := range e.exp.jobs {
				e.exp.state[j.ID] = JobState{Status: 1}
			}
			e.exp.mu.Unlock()
			e.clock.Set(e.clock.Now().Add(time.Hour + time.Second))
			create(tok).want(t, 200)
		})
	}
}

// TestVideoExpiry: videos older than Videos.MaxAge are removed with their
// job, file, manifest and signature, except those under a legal hold.
func TestVideoExpiry(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t, kind, func(c *Config) { c.Videos.MaxAge = 24 * time.Hour })
			clientID, _, tok := e.clientWithUser("expiry@example.com")
			cam := strconv.FormatInt(e.camera(clientID), 10)
			start := e.clock.Now().Add(-2 * time.Hour).UnixMilli()
			var ids []string
			for range 2 {
				r := e.do("POST", "/v2/api/drives?token="+tok+"&camera_id="+cam+"&start_at="+strconv.FormatInt(start, 10)+
					"&end_at="+strconv.FormatInt(start+60_000, 10)+"&description=v", nil).want(t, 200)
				id := strconv.FormatInt(int64(r.obj(t)["data"].(map[string]any)["id"].(float64)), 10)
				ids = append(ids, id)
				e.put(storage.VideoKey(id), "video "+id)
				n, _ := strconv.ParseInt(id, 10, 64)
				e.put(videoManifestKey(n), "manifest")
				e.put(videoSignatureKey(n), "sig")
			}
			e.do("POST", op("/api/v1/holds"), map[string]any{"video_id": ids[1], "reason": "case 12"}).want(t, 201)
			ctx := context.Background()
			e.clock.Set(e.clock.Now().Add(23 * time.Hour))
			if n, err := e.srv.ExpireVideos(ctx); err != nil || n != 0 {
				t.Fatalf("before the age: %d removed, %v", n, err)
			}
			e.clock.Set(e.clock.Now().Add(2 * time.Hour))
			if n, err := e.srv.ExpireVideos(ctx); err != nil || n != 1 {
				t.Fatalf("past the age: %d removed, %v", n, err)
			}
			data := e.do("GET", "/v2/api/drives?token="+tok, nil).want(t, 200).obj(t)["data"].([]any)
			if len(data) != 1 || strconv.FormatFloat(data[0].(map[string]any)["id"].(float64), 'f', -1, 64) != ids[1] {
				t.Fatalf("listing after expiry: %v", data)
			}
			n0, _ := strconv.ParseInt(ids[0], 10, 64)
			for _, k := range []string{storage.VideoKey(ids[0]), videoManifestKey(n0), videoSignatureKey(n0)} {
				if _, err := e.store.Stat(ctx, k); err == nil {
					t.Errorf("%s kept after its video expired", k)
				}
			}
			if _, err := e.store.Stat(ctx, storage.VideoKey(ids[1])); err != nil {
				t.Errorf("the held video's file: %v", err)
			}
			e.exp.mu.Lock()
			removed := e.exp.removed
			e.exp.mu.Unlock()
			if len(removed) != 1 || removed[0] != ids[0] {
				t.Errorf("export jobs removed %v, want [%s]", removed, ids[0])
			}
		})
	}
}
