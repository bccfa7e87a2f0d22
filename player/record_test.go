package player

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/synth"
)

// testServer is an httptest server with an fs store whose signed URLs it
// serves under /media/, like the app does.
type testServer struct {
	*httptest.Server
	mux   *http.ServeMux
	store *fs.FS

	mu  sync.Mutex
	evs []Event // the timeline's events
}

// events is the timeline's Events: those set, within the range.
func (ts *testServer) events(_ context.Context, _ string, from, to time.Time) ([]Event, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []Event
	for _, e := range ts.evs {
		if e.AtMs >= from.UnixMilli() && e.AtMs < to.UnixMilli() {
			out = append(out, e)
		}
	}
	return out, nil
}

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	st, err := fs.New(t.TempDir(), fs.Options{BaseURL: srv.URL + "/media", Secret: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("GET /media/", http.StripPrefix("/media", st.Handler()))
	return &testServer{Server: srv, mux: mux, store: st}
}

// record runs the synthetic camera's fixture (640x360 H.264 at 15 fps with
// AAC audio) through the real segmenter and spool from start for dur, faster
// than real time, and stores the segments as the recorder does (key layout,
// init-size metadata). It returns the stored segments in start order.
func record(t testing.TB, store storage.Store, camera string, start time.Time, dur, segDur time.Duration) []catalogue.Segment {
	t.Helper()
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	audio, err := synth.AudioFixture()
	if err != nil {
		t.Fatal(err)
	}
	upload := func(ctx context.Context, seg segmenter.Segment, body io.ReadSeeker) error {
		md := map[string]string{
			"codec": string(seg.Codec), "init-size": strconv.FormatInt(seg.InitSize, 10),
			"width": strconv.Itoa(seg.Width), "height": strconv.Itoa(seg.Height),
		}
		return store.Put(ctx, storage.SegmentKey(seg.Camera, seg.Start, seg.Duration, seg.InitSize), body, seg.Size,
			storage.PutOptions{ContentType: "video/mp4", Metadata: md})
	}
	sp, err := segmenter.NewSpool(segmenter.SpoolConfig{Dir: t.TempDir(), Upload: upload, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	w := segmenter.NewWriter(segmenter.WriterConfig{Camera: camera, SegmentDuration: segDur, Spool: sp, Log: zap.NewNop()})
	vt, at := clip.Track(), audio.Track()
	if err := w.SetTracks([]*media.Track{&vt, &at}); err != nil {
		t.Fatal(err)
	}
	frame := time.Duration(float64(time.Second) / clip.FPS)
	aDur := time.Second * 1024 / time.Duration(audio.SampleRate())
	ai := 0
	for i := 0; time.Duration(i)*frame < dur; i++ {
		d := time.Duration(i) * frame
		for time.Duration(ai)*aDur <= d {
			ad := time.Duration(ai) * aDur
			src := audio.Units[ai%len(audio.Units)]
			if err := w.WriteUnit(&media.Unit{Track: 1, PTS: ad, DTS: ad, Time: start.Add(ad), Payload: src.Payload}); err != nil {
				t.Fatal(err)
			}
			ai++
		}
		src := clip.Units[i%len(clip.Units)]
		if err := w.WriteUnit(&media.Unit{Track: 0, PTS: d, DTS: d, Time: start.Add(d), Key: src.Key, NALUs: src.NALUs}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := sp.Drain(ctx); err != nil {
		t.Fatalf("uploading segments: %v", err)
	}
	cat := catalogue.New(catalogue.Config{Store: store})
	segs, err := cat.Segments(ctx, camera, start, start.Add(dur))
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.InitSizes(ctx, segs); err != nil {
		t.Fatal(err)
	}
	return segs
}
