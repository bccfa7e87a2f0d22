package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/export"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestH265ExportInH264: a downloadable video of an H.265 camera asked
// through the API with codec=h264 is stored in H.264 (ffprobe reads it),
// over the range, from a keyframe, and its manifest
// hashes the stored bytes and counts the segments transcoded; asked
// without the option, it stays H.265.
func TestH265ExportInH264(t *testing.T) {
	t.Parallel()
	log, _ := testLogger(t)
	cam := startSynth(t, synth.CameraSpec{Path: "Streaming/Channels/101", User: "admin", Pass: "pw", Codec: synth.CodecH265, Small: true})
	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = "h265-export"
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.Listen = "127.0.0.1:0"
	c.RTMP.Addr = "127.0.0.1:0"
	c.OperatorToken = apiOperator
	c.Ingest.AllowPrivateNetworks = true
	c.Recording.SegmentDuration = config.Duration(2 * time.Second)
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	c.HTTP.PublicURL = ""
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a := startMode(t, c, app.Mode{Name: "test", Recorder: true, Cluster: true, API: true}, log)
	api := apiClient{t: t, base: a.URL()}
	op := "?token=" + apiOperator
	v := api.call("POST", "/api/v1/clients"+op, map[string]any{"name": "Acme", "document_type": 2, "document_number": "11.222.333/0001-81",
		"phone": "11 5555-0000", "cep": "01000-000", "address": "Rua A", "address_number": "10", "address_comp": "sala 2",
		"address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Ana", "email": "ana@acme.com", "phone": "11", "user_type": 2, "password": "password1", "password_conf": "password1"}}}, 201)
	client := one(t, "create client", v).(map[string]any)
	host, port, _ := strings.Cut(cam.Addr(), ":")
	v = api.call("POST", "/api/v1/cameras"+op, map[string]any{"description": "H.265", "camera_address": "Rua A, 10", "latitude": "-23.55",
		"longitude": "-46.63", "connection_type": 0, "resolution_id": 2, "history_days": 7, "client_id": client["id"], "model_id": 3,
		"stream": "0", "channel": 1, "dns": host, "port": port, "user": "admin", "pass": "pw"}, 201)
	id := strconv.Itoa(int(one(t, "create camera", v).(map[string]any)["id"].(float64)))
	st := a.Store()
	segs := waitSegments(t, st, id, 4, 60*time.Second)
	from, to := segs[1].StartMs, segs[3].StartMs

	read := func(key string) []byte {
		rc, err := st.Get(t.Context(), key, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name, query, want string
		transcoded        bool
	}{
		{"h264", "&codec=h264", "h264", true},
		{"as recorded", "", "hevc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dv := api.call("POST", "/v2/api/drives"+op+"&camera_id="+id+"&start_at="+strconv.FormatInt(from, 10)+
				"&end_at="+strconv.FormatInt(to, 10)+"&description=door"+tc.query, nil, 200).(map[string]any)
			vid := strconv.Itoa(int(dv["data"].(map[string]any)["id"].(float64)))
			testenv.WaitFor(t, 60*time.Second, "the video ready", func() bool {
				l := api.call("GET", "/v2/api/drives"+op+"&ids="+vid, nil, 200).(map[string]any)["data"].([]any)
				s := l[0].(map[string]any)["status"].(float64)
				if s == 2 {
					t.Fatalf("the video failed: %v", l[0])
				}
				return s == 1
			})
			n, _ := strconv.ParseInt(vid, 10, 64)
			body := read(storage.VideoKey(vid))
			p := filepath.Join(t.TempDir(), "video.mp4")
			if err := os.WriteFile(p, body, 0o600); err != nil {
				t.Fatal(err)
			}
			pr := ffprobe(t, p)
			if pr.Video.Codec != tc.want || !pr.Video.FirstKey {
				t.Errorf("video codec %q, first frame a keyframe %v; want %s from a keyframe", pr.Video.Codec, pr.Video.FirstKey, tc.want)
			}
			if want := float64(to-from) / 1000; pr.Video.Duration < want-0.1 || pr.Video.Duration > want+2.5 {
				t.Errorf("video of %.2f s; want the range's %.2f s plus at most a GOP", pr.Video.Duration, want)
			}
			var m export.Manifest
			if err := json.Unmarshal(read(export.ManifestKey(n)), &m); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(body)
			if m.VideoSHA256 != hex.EncodeToString(sum[:]) || m.VideoSize != int64(len(body)) {
				t.Errorf("manifest video %s (%d bytes); the stored video is %x (%d bytes)", m.VideoSHA256, m.VideoSize, sum, len(body))
			}
			if got := m.Transcoded > 0; got != tc.transcoded || tc.transcoded && m.Transcoded != len(m.Segments) {
				t.Errorf("manifest counts %d of %d segments transcoded", m.Transcoded, len(m.Segments))
			}
		})
	}
}
