package api

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// tokenPrefix starts every user api_token, so a leaked one is recognisable.
const tokenPrefix = "vgu_"

// newToken returns a fresh user token: the prefix and 32 random bytes.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// hashToken is how a token is stored: SHA-256, hex. Tokens carry 256 random
// bits, so a fast hash suffices (passwords get bcrypt).
func hashToken(t string) string {
	h := sha256.Sum256([]byte(t))
	return hex.EncodeToString(h[:])
}
