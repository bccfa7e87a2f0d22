package e2e

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestEvidenceIntegrityMinIO: a node recording into MinIO records every
// segment's hash in its hour manifest as it uploads it; the range verifies;
// after one segment's bytes are changed in the bucket and another is
// deleted, verification reports exactly those two keys.
func TestEvidenceIntegrityMinIO(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "ev", Codec: "h264"})
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "ev", URL: cam.URL("ev"), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	segs := waitSegments(t, st, "ev", 4, 60*time.Second)
	from, to := time.UnixMilli(segs[0].StartMs), time.UnixMilli(segs[3].StartMs+1)
	ctx := context.Background()
	// The manifest write follows each upload: wait until the four are listed.
	testenv.WaitForNil(t, 30*time.Second, "the four segments in their manifests", func() error {
		r, err := integrity.Verify(ctx, st, "ev", from, to)
		if err == nil && (!r.OK() || r.Segments != 4) {
			err = fmt.Errorf("report %+v", r)
		}
		return err
	})
	if err := st.Put(ctx, segs[1].Key, bytes.NewReader([]byte("tampered")), -1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, []string{segs[2].Key}); err != nil {
		t.Fatal(err)
	}
	r, err := integrity.Verify(ctx, st, "ev", from, to)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Problems {
		got = append(got, p.Kind+" "+p.Key)
	}
	slices.Sort(got)
	want := []string{integrity.ProblemChanged + " " + segs[1].Key, integrity.ProblemRemoved + " " + segs[2].Key}
	if !slices.Equal(got, want) {
		t.Fatalf("problems %q, want %q", got, want)
	}
}
