package api

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"strconv"
	"testing"
	"time"

	"github.com/vigia/vigia/export"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

// TestExportPublicKey: the key served is the deployment's export key, in
// the PEM form openssl reads; without a rotation there is no previous key.
func TestExportPublicKey(t *testing.T) {
	e := newEnv(t, "sqlite", nil)
	r := e.do("GET", "/api/v1/keys/export.pub", nil).want(t, 200)
	blk, _ := pem.Decode(r.body)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		t.Fatalf("not a PEM public key: %q", r.body)
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := sign.New(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if !keys.ExportKey().Public().(ed25519.PublicKey).Equal(k) {
		t.Fatal("served key is not the export key of the secret")
	}
	e.do("GET", "/api/v1/keys/export.pub?previous=1", nil).want(t, 404)
}

// TestVideoListingLinksManifest: a ready video's listing record links its
// manifest and signature, and its removal deletes them.
func TestVideoListingLinksManifest(t *testing.T) {
	e := newEnv(t, "sqlite", nil)
	clientID, _, tok := e.clientWithUser("manifest@example.com")
	c := strconv.FormatInt(e.camera(clientID), 10)
	start := e.clock.Now().Add(-30 * time.Minute).UnixMilli()
	r := e.do("POST", "/v2/api/drives?token="+tok+"&camera_id="+c+"&start_at="+strconv.FormatInt(start, 10)+"&end_at="+strconv.FormatInt(start+60000, 10)+"&description=x", nil).want(t, 200)
	id := int64(r.obj(t)["data"].(map[string]any)["id"].(float64))
	ids := strconv.FormatInt(id, 10)
	if videoManifestKey(id) != export.ManifestKey(id) || videoSignatureKey(id) != export.SignatureKey(id) {
		t.Fatal("manifest keys differ from the exporter's")
	}
	e.put(storage.VideoKey(ids), "the video")
	e.put(export.ManifestKey(id), "the manifest")
	e.put(export.SignatureKey(id), "the signature")
	e.exp.mu.Lock()
	e.exp.state[ids] = JobState{Status: 1}
	e.exp.mu.Unlock()
	r = e.do("GET", "/v2/api/drives?token="+tok, nil).want(t, 200)
	rec := r.obj(t)["data"].([]any)[0].(map[string]any)
	if got := fetch(t, rec["manifest"].(string)); got != "the manifest" {
		t.Fatalf("manifest url serves %q", got)
	}
	if got := fetch(t, rec["manifest_sig"].(string)); got != "the signature" {
		t.Fatalf("manifest_sig url serves %q", got)
	}
	e.do("POST", "/v2/api/drives/delete/"+ids+"?token="+tok, nil).want(t, 200)
	for _, k := range []string{export.ManifestKey(id), export.SignatureKey(id)} {
		if _, err := e.store.Stat(t.Context(), k); err == nil {
			t.Errorf("%s kept after the video's removal", k)
		}
	}
}
