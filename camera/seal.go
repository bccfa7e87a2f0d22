package camera

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/vigia/vigia/sign"
)

// ErrSealed is returned when a sealed value cannot be opened (wrong secret
// or tampered value).
var ErrSealed = errors.New("sealed value cannot be opened")

func aead(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Seal encrypts plaintext (AES-256-GCM, random nonce) with the camera
// credentials key of k's current secret.
func Seal(k *sign.Keys, plaintext string) (string, error) {
	if k == nil {
		return "", errors.New("seal: no keys")
	}
	g, err := aead(k.Key(sign.CameraSeal))
	if err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	nonce := make([]byte, g.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := g.Seal(nonce, nonce, []byte(plaintext), nil)
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a value made by Seal under k's current secret or, during
// and after a rotation, its previous one (Stale tells which).
func Open(k *sign.Keys, sealed string) (string, error) {
	pt, _, err := open(k, sealed)
	return pt, err
}

// Stale reports whether sealed opens only with k's previous secret: it
// should be sealed again under the current one before the previous secret
// is removed from the configuration.
func Stale(k *sign.Keys, sealed string) bool {
	_, stale, err := open(k, sealed)
	return err == nil && stale
}

func open(k *sign.Keys, sealed string) (pt string, stale bool, err error) {
	if sealed == "" {
		return "", false, nil
	}
	if k == nil {
		return "", false, errors.New("open: no keys")
	}
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		return "", false, ErrSealed
	}
	if pt, err := openWith(k.Key(sign.CameraSeal), raw); err == nil {
		return pt, false, nil
	}
	if prev, ok := k.Previous(sign.CameraSeal); ok {
		if pt, err := openWith(prev, raw); err == nil {
			return pt, true, nil
		}
	}
	return "", false, ErrSealed
}

func openWith(key, raw []byte) (string, error) {
	g, err := aead(key)
	if err != nil {
		return "", err
	}
	if len(raw) < g.NonceSize()+g.Overhead() {
		return "", ErrSealed
	}
	pt, err := g.Open(nil, raw[:g.NonceSize()], raw[g.NonceSize():], nil)
	if err != nil {
		return "", ErrSealed
	}
	return string(pt), nil
}
