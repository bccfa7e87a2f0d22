package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Digest purposes: each HMAC is bound to one use.
const (
	// PurposeDigest is the digest of camera API requests (recordings,
	// thumbnails, snapshots).
	PurposeDigest = "digest"
	// PurposeHash is the hash of camera video requests.
	PurposeHash = "hash"
	// PurposePlayer is the player_digest of the player page.
	PurposePlayer = "player"
)

// digestLen is the length of a digest in hex characters (128 bits).
const digestLen = 32

// Digest returns the HMAC-SHA256 under secret of purpose, camera and day
// (YYYY-MM-DD), as 32 hex characters.
func Digest(secret []byte, purpose, camera, day string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("vigia-digest\x00" + purpose + "\x00" + camera + "\x00" + day))
	return hex.EncodeToString(m.Sum(nil))[:digestLen]
}

// digestFor returns today's digest of camera for purpose.
func (s *Server) digestFor(purpose, camera string) string {
	return Digest(s.cfg.Secret, purpose, camera, s.now().In(s.loc).Format(time.DateOnly))
}

// checkDigest reports whether given is the camera's digest for purpose of
// today, or of yesterday while within the grace period after midnight.
func (s *Server) checkDigest(purpose, camera, given string) bool {
	if len(given) != digestLen {
		return false
	}
	now := s.now().In(s.loc)
	if hmac.Equal([]byte(given), []byte(Digest(s.cfg.Secret, purpose, camera, now.Format(time.DateOnly)))) {
		return true
	}
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, s.loc)
	if s.cfg.DigestGrace > 0 && now.Sub(midnight) < s.cfg.DigestGrace {
		yesterday := midnight.Add(-time.Hour).Format(time.DateOnly)
		return hmac.Equal([]byte(given), []byte(Digest(s.cfg.Secret, purpose, camera, yesterday)))
	}
	return false
}
