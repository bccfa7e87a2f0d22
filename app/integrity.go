package app

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/retention"
)

// integrityPart records the SHA-256 of every stored segment in its hour's
// manifest (docs/storage.md, Integrity).
type integrityPart struct {
	once    sync.Once
	rec     *integrity.Recorder
	holdsDB *db.DB // legal holds, in a process with the database
}

func (a *App) integrityRecorder() *integrity.Recorder {
	p := &a.integrity
	p.once.Do(func() {
		p.rec = integrity.NewRecorder(integrity.RecorderConfig{
			Store:      a.store,
			Log:        a.log.With(zap.String("component", "integrity")),
			Registerer: a.reg,
			SignKey:    a.exportSignKey(),
		})
	})
	return p.rec
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

// withQuotas gives the cameras cams lists the configuration's quotas
// (retention.WithQuotas).
func (a *App) withQuotas(cams func(context.Context) ([]retention.CameraRetention, error)) func(context.Context) ([]retention.CameraRetention, error) {
	return retention.WithQuotas(cams, a.cfg.Retention.CameraQuota.Bytes(), a.cfg.Retention.ClientQuota.Bytes())
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
