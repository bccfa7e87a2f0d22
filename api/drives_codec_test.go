package api

import (
	"strconv"
	"testing"
	"time"
)

// TestDownloadableVideoCodec: POST /v2/api/drives takes codec h264 (a
// video in H.264 whatever the recordings' codec) or recorded (as absent),
// passes it to the job, and refuses any other value with 422.
func TestDownloadableVideoCodec(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		clientID, _, tok := e.clientWithUser("codec@example.com")
		c := strconv.FormatInt(e.camera(clientID), 10)
		start := strconv.FormatInt(e.clock.Now().Add(-30*time.Minute).UnixMilli(), 10)
		end := strconv.FormatInt(e.clock.Now().Add(-29*time.Minute).UnixMilli(), 10)
		base := "/v2/api/drives?token=" + tok + "&camera_id=" + c + "&start_at=" + start + "&end_at=" + end + "&description=x"
		for _, tc := range []struct {
			name, query, want string
		}{
			{"absent", "", ""},
			{"recorded", "&codec=recorded", ""},
			{"h264", "&codec=h264", "h264"},
		} {
			n := len(e.exp.jobs)
			e.do("POST", base+tc.query, nil).want(t, 200)
			if len(e.exp.jobs) != n+1 || e.exp.jobs[n].Codec != tc.want {
				t.Errorf("%s: jobs %+v; want codec %q", tc.name, e.exp.jobs[n:], tc.want)
			}
		}
		r := e.do("POST", base+"&codec=vp9", nil).want(t, 422)
		if _, ok := r.obj(t)["errors"].(map[string]any)["codec"]; !ok {
			t.Errorf("422 without a codec error: %s", r.body)
		}
	})
}
