package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestLiveHLS: FFmpeg reads a camera's live LL-HLS from the node recording
// it with a valid token; without a token, with an expired one, or with one
// signed for another camera, the node refuses.
func TestLiveHLS(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "live", Codec: "h264", Audio: true}, synth.CameraSpec{Path: "other", Codec: "h264"})
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	for _, id := range []string{"live", "other"} {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cam.URL(id), Sound: true, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	good := a.LiveURL("live", time.Now().Add(time.Hour))
	testenv.WaitFor(t, 30*time.Second, "live playlist", func() bool {
		res, err := http.Get(good)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	out, err := exec.Command("ffprobe", "-v", "error", "-show_streams", "-of", "json", good).Output()
	if err != nil {
		t.Fatalf("ffprobe on the live playlist: %v", err)
	}
	var p struct {
		Streams []struct {
			CodecName string `json:"codec_name"`
			Width     int    `json:"width"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	codecs := []string{}
	for _, s := range p.Streams {
		codecs = append(codecs, s.CodecName)
	}
	if got := strings.Join(codecs, ","); !strings.Contains(got, "h264") || !strings.Contains(got, "aac") {
		t.Errorf("live streams %s, want h264 and aac", got)
	}

	u, _ := url.Parse(good)
	noToken := *u
	noToken.RawQuery = ""
	expired := a.LiveURL("live", time.Now().Add(-time.Minute))
	other := a.LiveURL("other", time.Now().Add(time.Hour))
	wrongCamera := strings.Replace(other, "/live/other/", "/live/live/", 1)
	for _, tc := range []struct {
		name, url string
		want      int
	}{
		{"no token", noToken.String(), http.StatusUnauthorized},
		{"expired", expired, http.StatusForbidden},
		{"other camera's token", wrongCamera, http.StatusForbidden},
	} {
		res, err := http.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, res.StatusCode, tc.want)
		}
	}
}
