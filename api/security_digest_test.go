package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/catalogue"
	keys "github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

// This file holds the digest tests: forged, expired, future, other-camera,
// other-purpose and other-secret digests are refused on every route that
// takes one, and the right one is accepted there.

// digestRoute is a route that takes a digest, hash or player_digest.
type digestRoute struct {
	name, method, pattern string
	// params are the digest parameters the route reads.
	params []string
	// upper: the route answers errors in the {"CODE", "MSG", "DATA"} envelope.
	upper bool
	// path is the request path of camera cam with the parameter set.
	path func(cam, param, value string) string
}

// digestRoutes lists the routes taking digests; tok is a token of the
// camera's client, now the test clock.
func digestRoutes(tok string, now time.Time) []digestRoute {
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	ts := strconv.FormatInt(now.Unix(), 10)
	q := func(param, value string) string { return param + "=" + value }
	return []digestRoute{
		{"recordings", "GET", "/camera/{id}/recordings", []string{"digest", "hash"}, true, func(c, p, v string) string {
			return "/camera/" + c + "/recordings?token=" + tok + "&timeStamp=" + ms + "&" + q(p, v)
		}},
		{"recordings slash", "GET", "/cameras/{id}/recordings/{$}", []string{"digest", "hash"}, true, func(c, p, v string) string {
			return "/cameras/" + c + "/recordings/?token=" + tok + "&id=" + c + "&timeStamp=" + ms + "&" + q(p, v)
		}},
		{"thumbs hourly", "GET", "/api/camera/{id}/thumbs-hourly", []string{"digest"}, false, func(c, p, v string) string {
			return "/api/camera/" + c + "/thumbs-hourly?token=" + tok + "&ts=" + ts + "&" + q(p, v)
		}},
		{"thumbs minutes", "GET", "/api/camera/{id}/thumbs-minutes", []string{"digest"}, false, func(c, p, v string) string {
			return "/api/camera/" + c + "/thumbs-minutes?token=" + tok + "&ts=" + ts + "&" + q(p, v)
		}},
		{"snapshot", "GET", "/api/v1/cameras/{id}/print", []string{"digest"}, false, func(c, p, v string) string {
			return "/api/v1/cameras/" + c + "/print?token=" + tok + "&" + q(p, v)
		}},
		{"snapshot at ts", "GET", "/api/v1/cameras/{id}/print", []string{"digest"}, false, func(c, p, v string) string {
			return "/api/v1/cameras/" + c + "/print?token=" + tok + "&ts=" + ts + "&" + q(p, v)
		}},
		{"snapshot now", "POST", "/api/v1/cameras/{id}/print", []string{"digest"}, false, func(c, p, v string) string {
			return "/api/v1/cameras/" + c + "/print?token=" + tok + "&" + q(p, v)
		}},
		{"player", "GET", "/api/camera/{id}/player", []string{"player_digest"}, false, func(c, p, v string) string {
			return "/api/camera/" + c + "/player?" + q(p, v)
		}},
		{"player with a token too", "GET", "/api/camera/{id}/player", []string{"player_digest"}, false, func(c, p, v string) string {
			return "/api/camera/" + c + "/player?token=" + tok + "&" + q(p, v)
		}},
		{"vod playlist", "GET", "/api/camera/{id}/vod.m3u8", []string{"player_digest"}, false, func(c, p, v string) string {
			return "/api/camera/" + c + "/vod.m3u8?from=" + strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10) + "&to=" + ms + "&" + q(p, v)
		}},
		{"vod segment", "GET", "/api/camera/{id}/segment/{file}", []string{"player_digest"}, false, func(c, p, v string) string {
			// The segment stored half an hour before now (TestDigestsRefused).
			return "/api/camera/" + c + "/segment/" + path.Base(storage.SegmentKey(c, now.Add(-30*time.Minute), 6*time.Second, 4)) + "?" + q(p, v)
		}},
		{"vod segment h264", "GET", "/api/camera/{id}/segment-h264/{file}", []string{"player_digest"}, false, func(c, p, v string) string {
			return "/api/camera/" + c + "/segment-h264/" + path.Base(storage.SegmentKey(c, now.Add(-30*time.Minute), 6*time.Second, 4)) + "?part=init&" + q(p, v)
		}},
		{"player live url", "GET", "/api/camera/{id}/player/live-url", []string{"player_digest"}, false, func(c, p, v string) string {
			return "/api/camera/" + c + "/player/live-url?" + q(p, v)
		}},
		{"player timeline", "GET", "/api/camera/{id}/player/timeline", []string{"player_digest"}, false, func(c, p, v string) string {
			return "/api/camera/" + c + "/player/timeline?from=" + strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10) + "&to=" + ms + "&" + q(p, v)
		}},
		{"player thumbnails", "GET", "/api/camera/{id}/player/thumbs", []string{"player_digest"}, false, func(c, p, v string) string {
			return "/api/camera/" + c + "/player/thumbs?from=" + strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10) + "&to=" + ms + "&" + q(p, v)
		}},
		{"player videos", "GET", "/api/camera/{id}/player/videos", []string{"player_digest"}, false, func(c, p, v string) string {
			return "/api/camera/" + c + "/player/videos?" + q(p, v)
		}},
	}
}

// purposeOf maps a digest parameter to the purpose it is signed for.
var purposeOf = map[string]string{"digest": PurposeDigest, "hash": PurposeHash, "player_digest": PurposePlayer}

// TestDigestRoutesCovered: every camera-scoped route of the table either
// is in digestRoutes or is known to take no digest, so a new route taking
// one cannot miss the refusal test.
func TestDigestRoutesCovered(t *testing.T) {
	taking := map[string]bool{}
	for _, r := range digestRoutes("", time.Now()) {
		taking[r.method+" "+r.pattern] = true
	}
	without := map[string]bool{
		"PUT /api/v1/cameras/{id}": true, "POST /api/v1/cameras/{id}/push-key": true, "GET /api/camera-player/{id}": true,
		"GET /api/camera/{id}/live-url": true, "POST /api/camera/{id}/live-url": true,
		"GET /api/cameras/{id}/live-url/{$}": true, "POST /api/cameras/{id}/live-url/{$}": true,
		"POST /v2/api/drives/delete/{id}":  true,
		"POST /api/v1/holds/{id}/lift":     true,                                             // hold ids
		"GET /api/user/block/{token}/{id}": true, "GET /api/user/unblock/{token}/{id}": true, // user ids
		"POST /api/v1/lpr/{id}/{key}": true, // a camera key, not a digest
	}
	for _, r := range Routes() {
		k := r.Method + " " + r.Pattern
		if strings.Contains(r.Pattern, "{id}") && !taking[k] && !without[k] {
			t.Errorf("route %s is neither tested for digests nor known to take none", k)
		}
		delete(taking, k)
	}
	for k := range taking {
		t.Errorf("digestRoutes names %s, which is not a route", k)
	}
}

// wantDigestRefused fails unless r is 403 with the route's error body.
func wantDigestRefused(t *testing.T, what string, r resp, upper bool) {
	t.Helper()
	var body map[string]any
	if r.status != http.StatusForbidden || json.Unmarshal(r.body, &body) != nil {
		t.Errorf("%s: status %d, want 403: %.200s", what, r.status, r.body)
		return
	}
	code, msg := "code", "msg"
	if upper {
		code, msg = "CODE", "MSG"
	}
	if body[code] != float64(1) || body[msg] == "" {
		t.Errorf("%s: not the error body: %s", what, r.body)
	}
}

// randomHex returns n random hex characters.
func randomHex(t *testing.T, n int) string {
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)[:n]
}

// TestDigestsRefused: on every route that takes a digest (recordings in
// both forms, hourly and minute thumbnails, snapshot read and request,
// player page, its playlist, segment addresses and live renewal), the
// camera's right digest of today is accepted, and refused with 403 are:
// random hex, a truncated, extended or non-hex value, the digest of two
// days ago, of yesterday after the grace period, of tomorrow, of another
// camera of the same client, of every other purpose (player_digest as
// digest, hash as digest, digest as hash, …), the same fields signed for
// every other purpose of the key scheme, and one signed with another
// secret.
func TestDigestsRefused(t *testing.T) {
	eachLoggedEnv(t, nil, func(t *testing.T, e *env) {
		clientID, _, tok := e.clientWithUser("digests@example.com")
		camA, camB := e.camera(clientID), e.camera(clientID) // the token sees both
		a := strconv.FormatInt(camA, 10)
		today := e.clock.Now() // 2025-03-10 15:30 UTC; grace 1 h
		sign := func(purpose string, cam int64, day time.Time) string {
			return e.signDigest(testKeys, purpose, cam, day, 0)
		}
		otherKeys := mustKeys([]byte("another-secret-0123456789abcdef0"))
		day := 24 * time.Hour
		// Segments for the playlist to list, in the hour before each clock
		// time at which the right digest is accepted.
		for _, at := range []time.Time{today, time.Date(2025, 3, 11, 0, 59, 59, 0, time.UTC)} {
			body := "init" + "segment"
			err := e.store.Put(context.Background(), storage.SegmentKey(camID(camA), at.Add(-30*time.Minute), 6*time.Second, 4),
				strings.NewReader(body), int64(len(body)), storage.PutOptions{Metadata: map[string]string{catalogue.MetaInitSize: "4"}})
			if err != nil {
				t.Fatal(err)
			}
		}
		refused, accepted := 0, 0
		for _, rt := range digestRoutes(tok, today) {
			for _, param := range rt.params {
				purpose := purposeOf[param]
				right := sign(purpose, camA, today)
				// The right value is accepted: the refusals below are the digest's.
				if r := e.do(rt.method, rt.path(a, param, right), nil); r.status != http.StatusOK {
					t.Fatalf("%s with the right %s: status %d: %.200s", rt.name, param, r.status, r.body)
				}
				accepted++
				n := len(right)
				bad := []struct{ name, value string }{
					{"random hex", randomHex(t, n)},
					{"other random hex", randomHex(t, n)},
					{"zeros", strings.Repeat("0", n)},
					{"truncated", right[:n-1]},
					{"extended", right + "0"},
					{"doubled", right + right},
					{"not hex", strings.Repeat("z", n)},
					{"right one with a changed character", right[:n-1] + string("10"[(right[n-1]&1)])},
					{"two days ago", sign(purpose, camA, today.Add(-2*day))},
					{"yesterday, past the grace period", sign(purpose, camA, today.Add(-day))},
					{"tomorrow", sign(purpose, camA, today.Add(day))},
					{"another camera", sign(purpose, camB, today)},
					{"another secret", e.signDigest(otherKeys, purpose, camA, today, 0)},
				}
				for other := range purposeOf {
					if p := purposeOf[other]; p != purpose {
						bad = append(bad, struct{ name, value string }{other + " as " + param, sign(p, camA, today)})
					}
				}
				// The same fields signed for every other purpose of the key
				// scheme (storage URLs, live tokens, stream keys, …).
				for _, p := range keys.Purposes() {
					if p != digestPurpose[purpose] {
						bad = append(bad, struct{ name, value string }{"signed for " + string(p), e.signDigestAs(testKeys, p, purpose, camA, today, 0)})
					}
				}
				for _, b := range bad {
					if b.value == right {
						t.Fatalf("%s: %s equals the right digest", rt.name, b.name)
					}
					wantDigestRefused(t, rt.name+": "+param+" "+b.name, e.do(rt.method, rt.path(a, param, b.value), nil), rt.upper)
					refused++
				}
			}
		}
		// Expiry by the clock: yesterday's digest is good during the grace
		// period after midnight and refused from its end.
		for _, c := range []struct {
			at time.Time
			ok bool
		}{
			{time.Date(2025, 3, 11, 0, 59, 59, 0, time.UTC), true},
			{time.Date(2025, 3, 11, 1, 0, 0, 0, time.UTC), false},
			{time.Date(2025, 3, 11, 12, 0, 0, 0, time.UTC), false},
			{time.Date(2025, 3, 12, 0, 30, 0, 0, time.UTC), false}, // within a grace, but two days on
		} {
			e.clock.Set(c.at)
			for _, rt := range digestRoutes(tok, c.at) {
				for _, param := range rt.params {
					r := e.do(rt.method, rt.path(a, param, sign(purposeOf[param], camA, today)), nil)
					what := rt.name + ": " + param + " of " + today.Format(time.DateOnly) + " at " + c.at.Format(time.DateTime)
					if c.ok {
						if r.status != http.StatusOK {
							t.Errorf("%s: status %d, want 200: %.200s", what, r.status, r.body)
						}
						accepted++
						continue
					}
					wantDigestRefused(t, what, r, rt.upper)
					refused++
				}
			}
		}
		e.clock.Set(today)
		// Parameters of another route: thumbnails take no hash, and the player
		// no digest or hash; a token is still needed where the spec asks one.
		hash, dig := sign(PurposeHash, camA, today), sign(PurposeDigest, camA, today)
		ts := strconv.FormatInt(today.Unix(), 10)
		for _, c := range []struct {
			name, path string
			status     int
		}{
			{"thumbs with a hash only", "/api/camera/" + a + "/thumbs-minutes?token=" + tok + "&ts=" + ts + "&hash=" + hash, 422},
			{"player with a digest only", "/api/camera/" + a + "/player?digest=" + dig, 401},
			{"player with a hash only", "/api/camera/" + a + "/player?hash=" + hash, 401},
			{"recordings without a token", "/camera/" + a + "/recordings?timeStamp=1&digest=" + dig, 401},
			{"thumbs without a token", "/api/camera/" + a + "/thumbs-hourly?ts=" + ts + "&digest=" + dig, 401},
			{"recordings with a bad digest and the right hash", "/camera/" + a + "/recordings?token=" + tok + "&timeStamp=1&digest=" + randomHex(t, 32) + "&hash=" + hash, 403},
		} {
			if r := e.do("GET", c.path, nil); r.status != c.status {
				t.Errorf("%s: status %d, want %d: %.200s", c.name, r.status, c.status, r.body)
			}
			refused++
		}
		t.Logf("%d digests refused, %d accepted", refused, accepted)
	})
}
