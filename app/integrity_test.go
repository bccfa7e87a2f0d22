package app

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/retention"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage/fs"
)

// TestUploadRecordsHash: a spooled segment's upload records the SHA-256 of
// its bytes in its hour's manifest, signed with the deployment key, whether
// the fs store links the spool file or another store reads it through the
// upload.
func TestUploadRecordsHash(t *testing.T) {
	for _, backend := range []string{"fs", "s3"} {
		t.Run(backend, func(t *testing.T) {
			st, err := fs.New(t.TempDir(), fs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cfg := config.Default()
			cfg.Storage.Backend = backend // "s3": the store is read through the upload
			cfg.Cameras = []config.Camera{{ID: "cam", HistoryDays: 7}}
			keys, err := sign.New([]byte("0123456789abcdef-upload-test"))
			if err != nil {
				t.Fatal(err)
			}
			a := &App{cfg: cfg, log: zap.NewNop(), reg: metrics.NewRegistry(), store: st, keys: keys}
			body := []byte("a segment's bytes, as spooled")
			p := filepath.Join(t.TempDir(), "seg.mp4")
			if err := os.WriteFile(p, body, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			start := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
			seg := segmenter.Segment{Camera: "cam", Start: start, Duration: time.Minute, InitSize: 10, Size: int64(len(body)), Path: p}
			if err := a.uploadSegment(context.Background(), seg, f); err != nil {
				t.Fatal(err)
			}
			m, err := integrity.ReadManifest(context.Background(), st, integrity.ManifestKey("cam", start))
			if err != nil || m == nil || len(m.Segments) != 1 {
				t.Fatalf("manifest %+v, %v", m, err)
			}
			sum := sha256.Sum256(body)
			if e := m.Segments[0]; e.Key != segmentKey(seg) || e.Size != int64(len(body)) || e.SHA256 != hex.EncodeToString(sum[:]) || e.Recovered {
				t.Fatalf("entry %+v", e)
			}
			if err := m.CheckSignature([]ed25519.PublicKey{keys.ExportKey().Public().(ed25519.PublicKey)}); err != nil {
				t.Fatalf("manifest not signed with the deployment key: %v", err)
			}
		})
	}
}

// TestLegalHoldsFromDatabase: the database's sweeper gets the camera holds
// in force, and the static cameras' sweeper none.
func TestLegalHoldsFromDatabase(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "api.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	now := time.Now()
	kept, err := d.CreateHold(ctx, db.Hold{CameraID: 7, StartMs: 1000, EndMs: 2000, Reason: "case", PlacedBy: "op", PlacedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	lifted, _ := d.CreateHold(ctx, db.Hold{CameraID: 8, StartMs: 1000, EndMs: 2000, Reason: "case", PlacedBy: "op", PlacedAt: now})
	_, _ = d.CreateHold(ctx, db.Hold{VideoID: 3, Reason: "claim", PlacedBy: "op", PlacedAt: now})
	if err := d.LiftHold(ctx, lifted.ID, "op", "done", now); err != nil {
		t.Fatal(err)
	}
	a := &App{cfg: config.Default(), log: zap.NewNop()}
	a.integrity.holdsDB = d
	if a.legalHolds("static") != nil {
		t.Fatal("the static cameras' sweeper got database holds")
	}
	hs, err := a.legalHolds("database")(ctx)
	if err != nil || len(hs) != 1 || hs[0] != (retention.Hold{Camera: "7", FromMs: 1000, ToMs: 2000}) {
		t.Fatalf("holds %+v (%v), want hold %d only", hs, err, kept.ID)
	}
}
