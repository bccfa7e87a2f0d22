package camera

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// ErrSealed is returned when a sealed value cannot be opened (wrong secret
// or tampered value).
var ErrSealed = errors.New("sealed value cannot be opened")

func aead(secret []byte) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, secret, nil, "vigia camera credentials v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Seal encrypts plaintext with a key derived from the shared secret.
func Seal(secret []byte, plaintext string) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("seal: empty secret")
	}
	g, err := aead(secret)
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

// Open decrypts a value made by Seal.
func Open(secret []byte, sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		return "", ErrSealed
	}
	g, err := aead(secret)
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
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
