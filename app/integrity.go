package app

import (
	"context"
	"crypto/ed25519"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/retention"
	"github.com/vigia/vigia/storage"
)

// integrityPart records the SHA-256 of every stored segment in its hour's
// manifest (docs/storage.md, Integrity).
type integrityPart struct {
	once     sync.Once
	rec      *integrity.Recorder
	failures prometheus.Counter
	holdsDB  *db.DB // legal holds, in a process with the database
}

func (a *App) integrityRecorder() *integrity.Recorder {
	p := &a.integrity
	p.once.Do(func() {
		p.rec = integrity.NewRecorder(integrity.RecorderConfig{
			Store:   a.store,
			Log:     a.log.With(zap.String("component", "integrity")),
			SignKey: a.exportSignKey(),
		})
		p.failures = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_integrity_manifest_failures_total",
			Help: "Segment manifest writes that failed; the next write of the camera's hour, or the next start, completes the manifest.",
		})
		if a.reg != nil {
			_ = a.reg.Register(p.failures)
		}
	})
	return p.rec
}

// putSegment stores a spooled segment and returns the SHA-256 of the bytes
// stored, reading the spool file once: through the upload where the store
// reads it, before it where the fs store links the file and reads nothing.
func (a *App) putSegment(ctx context.Context, key string, body io.ReadSeeker, size int64, opts storage.PutOptions) ([32]byte, error) {
	if f, ok := body.(*os.File); ok && opts.Immutable && a.cfg.Storage.Backend == "fs" {
		sum, _, err := integrity.HashAll(f)
		if err != nil {
			return sum, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return sum, err
		}
		return sum, a.store.Put(ctx, key, f, size, opts)
	}
	hr := integrity.NewHashReader(body)
	if err := a.store.Put(ctx, key, hr, size, opts); err != nil {
		return [32]byte{}, err
	}
	if sum, ok := hr.Sum(size); ok {
		return sum, nil
	}
	// The store read the body out of order: hash it again.
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return [32]byte{}, err
	}
	sum, _, err := integrity.HashAll(body)
	return sum, err
}

// recordIntegrity adds a stored segment to its hour's manifest. A failure
// does not fail the upload: the segment is stored, and the manifest is
// completed by the camera's next manifest write or the next start.
func (a *App) recordIntegrity(ctx context.Context, key string, size int64, sum [32]byte) {
	rec := a.integrityRecorder()
	if err := rec.Record(ctx, key, size, sum); err != nil {
		a.integrity.failures.Inc()
		a.log.Warn("segment manifest not written", zap.String("key", key), zap.Error(err))
	}
}

// exportSignKey is the key that signs downloadable videos' manifests,
// derived from security.secret; nil without keys.
func (a *App) exportSignKey() ed25519.PrivateKey {
	if a.keys == nil {
		return nil
	}
	return a.keys.ExportKey()
}

// ManifestKeys returns, for the commands that sign or check manifests
// without a running node (vigia export, vigia verify), the deployment's
// Ed25519 signing key under cfg's security.secret (or the secret vigia
// serve keeps under data_dir) and the public keys of the current and the
// previous secret (security.previous_secret).
func ManifestKeys(cfg *config.Config) (ed25519.PrivateKey, []ed25519.PublicKey, error) {
	generate := false // never make a secret here: only read the one kept
	if cfg.Security.Secret == "" {
		if _, err := os.Stat(filepath.Join(cfg.DataDir, "secret")); err == nil {
			generate = true
		}
	}
	_, keys, err := loadKeys(cfg.Security, cfg.DataDir, generate)
	if err != nil {
		return nil, nil, err
	}
	priv := keys.ExportKey()
	pubs := []ed25519.PublicKey{priv.Public().(ed25519.PublicKey)}
	if prev, ok := keys.PreviousExportKey(); ok {
		pubs = append(pubs, prev.Public().(ed25519.PublicKey))
	}
	return priv, pubs, nil
}

// withQuotas gives the cameras cams lists the storage quotas of the
// configuration (retention.camera_quota, retention.client_quota) unless
// they carry their own.
func (a *App) withQuotas(cams func(context.Context) ([]retention.CameraRetention, error)) func(context.Context) ([]retention.CameraRetention, error) {
	camQ, clientQ := a.cfg.Retention.CameraQuota.Bytes(), a.cfg.Retention.ClientQuota.Bytes()
	return func(ctx context.Context) ([]retention.CameraRetention, error) {
		out, err := cams(ctx)
		for i := range out {
			if out[i].QuotaBytes == 0 {
				out[i].QuotaBytes = camQ
			}
			if out[i].ClientQuotaBytes == 0 {
				out[i].ClientQuotaBytes = clientQ
			}
		}
		return out, err
	}
}

// legalHolds returns the legal holds of the database's cameras for the
// database's sweeper (docs/retention.md, Legal holds); nil for the static
// cameras' sweeper (holds are placed on API cameras).
func (a *App) legalHolds(cameras string) func(context.Context) ([]retention.Hold, error) {
	d := a.integrity.holdsDB
	if cameras != "database" || d == nil {
		return nil
	}
	return func(ctx context.Context) ([]retention.Hold, error) {
		hs, err := d.Holds(ctx, true)
		if err != nil {
			return nil, err
		}
		var out []retention.Hold
		for _, h := range hs {
			if h.CameraID != 0 {
				out = append(out, retention.Hold{Camera: strconv.FormatInt(h.CameraID, 10), FromMs: h.StartMs, ToMs: h.EndMs})
			}
		}
		return out, nil
	}
}
