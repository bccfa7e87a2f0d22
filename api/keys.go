package api

import (
	"crypto/ed25519"
	"net/http"
	"strconv"

	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

// exportPublicKey is GET /api/v1/keys/export.pub: the PEM public key
// (SubjectPublicKeyInfo) that verifies the signatures of downloadable
// videos' manifests, derived from security.secret (docs/export.md). With
// previous=1 it is the previous secret's key during a rotation (404
// without one). No token: the key is public.
func (s *Server) exportPublicKey(w http.ResponseWriter, r *http.Request) error {
	key := s.keys.ExportKey()
	if r.URL.Query().Get("previous") == "1" {
		prev, ok := s.keys.PreviousExportKey()
		if !ok {
			return fail(http.StatusNotFound, "no previous key")
		}
		key = prev
	}
	pem := sign.PublicKeyPEM(key.Public().(ed25519.PublicKey))
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Header().Set("Cache-Control", "no-cache")
	_, err := w.Write(pem)
	return err
}

// videoManifestKey is the key of video id's signed manifest
// (export.ManifestKey), and videoSignatureKey its detached signature's
// (export.SignatureKey).
func videoManifestKey(id int64) string {
	return storage.PrefixVideos + strconv.FormatInt(id, 10) + ".manifest.json"
}

func videoSignatureKey(id int64) string {
	return storage.PrefixVideos + strconv.FormatInt(id, 10) + ".manifest.sig"
}
