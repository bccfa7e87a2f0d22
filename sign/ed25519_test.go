package sign

import (
	"bytes"
	"crypto/ed25519"
	"testing"
	"time"
)

// TestExportKey: the export key is fixed by the secret, differs between
// secrets and from every other purpose's key, is kept as the previous key
// through a rotation, and its PEM reads back.
func TestExportKey(t *testing.T) {
	a, b := mustKeys(t, secretA), mustKeys(t, secretB)
	ka, kb := a.ExportKey(), b.ExportKey()
	if !ka.Equal(mustKeys(t, secretA).ExportKey()) || ka.Equal(kb) {
		t.Fatal("the export key is not a function of the secret alone")
	}
	for _, p := range Purposes() {
		if p != ExportManifest && bytes.Equal(ka.Seed(), a.Key(p)) {
			t.Errorf("export key seed equals the key of %q", p)
		}
	}
	if _, ok := a.PreviousExportKey(); ok {
		t.Error("a previous key without a rotation")
	}
	rot, err := b.WithPrevious(secretA, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if prev, ok := rot.PreviousExportKey(); !ok || !prev.Equal(ka) || !rot.ExportKey().Equal(kb) {
		t.Error("rotation: current and previous export keys")
	}
	pub := ka.Public().(ed25519.PublicKey)
	back, err := ParsePublicKeyPEM(PublicKeyPEM(pub))
	if err != nil || !back.Equal(pub) {
		t.Fatalf("PEM round trip: %v", err)
	}
	if len(KeyID(pub)) != 16 || KeyID(pub) == KeyID(kb.Public().(ed25519.PublicKey)) {
		t.Error("key ids")
	}
}
