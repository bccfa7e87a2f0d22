package api

import (
	"strconv"
	"testing"
	"time"
)

// TestTenancy: a user of client A tries every camera-scoped route with
// client B's camera id, and A's camera with B's digests; all are refused.
func TestTenancy(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		clientA, _, tokA := e.clientWithUser("a@example.com")
		clientB, _, tokB := e.clientWithUser("b@example.com")
		camA, camB := e.camera(clientA), e.camera(clientB)
		a, b := strconv.FormatInt(camA, 10), strconv.FormatInt(camB, 10)
		// B has a video A must not see or remove.
		start := e.clock.Now().Add(-10 * time.Minute).UnixMilli()
		r := e.do("POST", "/v2/api/drives?token="+tokB+"&camera_id="+b+"&start_at="+strconv.FormatInt(start, 10)+
			"&end_at="+strconv.FormatInt(start+60000, 10)+"&description=v", nil).want(t, 200)
		videoB := strconv.FormatInt(int64(r.obj(t)["data"].(map[string]any)["id"].(float64)), 10)

		ts := strconv.FormatInt(e.clock.Now().Unix(), 10)
		ms := strconv.FormatInt(e.clock.Now().UnixMilli(), 10)
		dB, hB, pB := e.digest(PurposeDigest, camB), e.digest(PurposeHash, camB), e.digest(PurposePlayer, camB)
		cases := []struct {
			name, method, path string
		}{
			{"get camera", "GET", "/api/camera-player/" + b + "?token=" + tokA},
			{"player by token", "GET", "/api/camera/" + b + "/player?token=" + tokA},
			{"player with B's digest on A", "GET", "/api/camera/" + a + "/player?player_digest=" + pB},
			{"vod by token", "GET", "/api/camera/" + b + "/vod.m3u8?token=" + tokA + "&from=0&to=1000"},
			{"vod with B's digest on A", "GET", "/api/camera/" + a + "/vod.m3u8?player_digest=" + pB + "&from=0&to=1000"},
			{"recordings", "GET", "/camera/" + b + "/recordings?token=" + tokA + "&id=" + b + "&digest=" + dB + "&timeStamp=" + ms},
			{"recordings slash", "GET", "/cameras/" + b + "/recordings/?token=" + tokA + "&id=" + b + "&digest=" + dB + "&timeStamp=" + ms},
			{"recordings A with B's digest", "GET", "/camera/" + a + "/recordings?token=" + tokA + "&id=" + a + "&digest=" + dB + "&timeStamp=" + ms},
			{"recordings A with B's hash", "GET", "/camera/" + a + "/recordings?token=" + tokA + "&id=" + a + "&hash=" + hB + "&timeStamp=" + ms},
			{"recordings query id of B", "GET", "/camera/" + a + "/recordings?token=" + tokA + "&id=" + b + "&digest=" + e.digest(PurposeDigest, camA) + "&timeStamp=" + ms},
			{"thumbs hourly", "GET", "/api/camera/" + b + "/thumbs-hourly?token=" + tokA + "&id=" + b + "&digest=" + dB + "&ts=" + ts},
			{"thumbs minutes", "GET", "/api/camera/" + b + "/thumbs-minutes?token=" + tokA + "&id=" + b + "&digest=" + dB + "&ts=" + ts},
			{"thumbs A with B's digest", "GET", "/api/camera/" + a + "/thumbs-minutes?token=" + tokA + "&id=" + a + "&digest=" + dB + "&ts=" + ts},
			{"live url", "GET", "/api/camera/" + b + "/live-url?token=" + tokA + "&id=" + b},
			{"live url post", "POST", "/api/camera/" + b + "/live-url?token=" + tokA + "&id=" + b},
			{"live url slash", "GET", "/api/cameras/" + b + "/live-url/?token=" + tokA + "&id=" + b},
			{"live url slash post", "POST", "/api/cameras/" + b + "/live-url/?token=" + tokA + "&id=" + b},
			{"snapshot get", "GET", "/api/v1/cameras/" + b + "/print?token=" + tokA + "&id=" + b},
			{"snapshot get at ts", "GET", "/api/v1/cameras/" + b + "/print?token=" + tokA + "&id=" + b + "&ts=" + ts},
			{"snapshot post", "POST", "/api/v1/cameras/" + b + "/print?token=" + tokA + "&id=" + b},
			{"snapshot A with B's digest", "GET", "/api/v1/cameras/" + a + "/print?token=" + tokA + "&id=" + a + "&digest=" + dB},
			{"create video", "POST", "/v2/api/drives?token=" + tokA + "&camera_id=" + b + "&start_at=" + strconv.FormatInt(start, 10) + "&end_at=" + strconv.FormatInt(start+60000, 10) + "&description=x"},
			{"delete video", "POST", "/v2/api/drives/delete/" + videoB + "?token=" + tokA},
			{"events of camera", "GET", "/api/v1/events?token=" + tokA + "&start_at=2025-03-01&end_at=2025-03-31&camera=" + b},
			{"update camera", "PUT", "/api/v1/cameras/" + b + "?token=" + tokA},
		}
		refused := 0
		for _, tc := range cases {
			r := e.do(tc.method, tc.path, nil)
			if r.status >= 400 && r.status < 500 {
				refused++
				continue
			}
			t.Errorf("%s: %s %s answered %d: %s", tc.name, tc.method, tc.path, r.status, r.body)
		}
		// The video listing filters instead of refusing: B's video is not in A's list.
		r = e.do("GET", "/v2/api/drives?token="+tokA+"&ids="+videoB, nil).want(t, 200)
		if n := len(r.obj(t)["data"].([]any)); n != 0 {
			t.Errorf("A sees %d of B's videos", n)
		} else {
			refused++
		}
		// A's listing holds A's camera only.
		r = e.do("GET", "/api/v4/cameras?token="+tokA, nil).want(t, 200)
		if data := r.obj(t)["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != a {
			t.Errorf("A's listing: %s", r.body)
		} else {
			refused++
		}
		total := len(cases) + 2
		t.Logf("refused %d of %d cross-client requests", refused, total)
		if refused != total {
			t.Fatalf("refused %d of %d", refused, total)
		}
		// The owner gets through the same routes (the refusals are not blanket).
		e.do("GET", "/api/camera-player/"+b+"?token="+tokB, nil).want(t, 200)
		e.do("GET", "/camera/"+b+"/recordings?token="+tokB+"&id="+b+"&digest="+dB+"&timeStamp="+ms, nil).want(t, 200)
		e.do("GET", "/camera/"+b+"/recordings?token="+tokB+"&id="+b+"&hash="+hB+"&timeStamp="+ms, nil).want(t, 200)
	})
}
