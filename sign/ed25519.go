package sign

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
)

// ExportKey returns the Ed25519 key that signs the manifests of
// downloadable videos under the current secret: its seed is the
// ExportManifest key, so each deployment (each security.secret) has its own
// and a new secret brings a new key.
func (k *Keys) ExportKey() ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(k.Key(ExportManifest))
}

// PreviousExportKey returns the export signing key of the previous secret
// during a rotation; ok is false without one.
func (k *Keys) PreviousExportKey() (ed25519.PrivateKey, bool) {
	seed, ok := k.Previous(ExportManifest)
	if !ok {
		return nil, false
	}
	return ed25519.NewKeyFromSeed(seed), true
}

// PublicKeyPEM returns pub as a PEM "PUBLIC KEY" block (SubjectPublicKeyInfo),
// the form `openssl pkeyutl -pubin -inkey` reads.
func PublicKeyPEM(pub ed25519.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		panic("sign: marshal ed25519 public key: " + err.Error())
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// KeyID names a public key: the first 16 hex digits of the SHA-256 of its
// 32 bytes.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// ParsePublicKeyPEM reads an Ed25519 public key written by PublicKeyPEM.
func ParsePublicKeyPEM(b []byte) (ed25519.PublicKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, errors.New("no PEM public key")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("not an Ed25519 public key")
	}
	return pub, nil
}
