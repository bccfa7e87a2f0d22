package api

import (
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/sign"
)

// Digest parameters: each is signed for its own purpose (package sign), so
// one never passes for another.
const (
	// PurposeDigest is the digest of camera API requests (recordings,
	// thumbnails, snapshots).
	PurposeDigest = "digest"
	// PurposeHash is the hash of camera video requests.
	PurposeHash = "hash"
	// PurposePlayer is the player_digest of the player page.
	PurposePlayer = "player"
)

// digestPurpose maps a digest parameter to its signing purpose.
var digestPurpose = map[string]sign.Purpose{
	PurposeDigest: sign.APIDigest,
	PurposeHash:   sign.APIHash,
	PurposePlayer: sign.APIPlayer,
}

// viewer is whom a player_digest was given to: a user with its access
// generation, or the operator (id 0).
type viewer struct {
	id, gen int64
}

// viewerOf returns the viewer of the caller.
func viewerOf(p principal) viewer {
	if p.operator {
		return viewer{}
	}
	return viewer{id: p.user.ID, gen: p.user.AccessGen}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// digestExpiry returns the last second in which the digests of t's day
// (api.timezone) are valid: the one before the next midnight plus
// api.digest_grace.
func (s *Server) digestExpiry(t time.Time) time.Time {
	t = t.In(s.loc)
	return s.graceEnd(time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, s.loc))
}

// graceEnd is the last second of the grace period after midnight.
func (s *Server) graceEnd(midnight time.Time) time.Time {
	return midnight.Add(max(s.cfg.DigestGrace, 0) - time.Second)
}

// digestExpiries returns the expiries a digest given now may carry: today's
// and yesterday's (which Verify refuses once the grace has passed).
func (s *Server) digestExpiries(now time.Time) [2]time.Time {
	n := now.In(s.loc)
	midnight := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, s.loc)
	return [2]time.Time{s.digestExpiry(now), s.graceEnd(midnight)}
}

// digestFields are the signed fields of a camera's digest and hash: the
// camera, its client and the client's access generation, so that moving
// the camera to another client, or blocking or unblocking the client,
// changes them.
func digestFields(c db.Camera, cl db.Client) []string {
	return []string{itoa(c.ID), itoa(cl.ID), itoa(cl.AccessGen)}
}

// digestFor returns today's digest or hash (purpose) of camera c of client
// cl.
func (s *Server) digestFor(purpose string, c db.Camera, cl db.Client) string {
	return s.keys.Sign(digestPurpose[purpose], s.digestExpiry(s.now()), digestFields(c, cl)...)
}

// checkDigest reports whether given is the digest or hash (purpose) of
// camera c of client cl of today, or of yesterday within the grace period.
func (s *Server) checkDigest(purpose string, c db.Camera, cl db.Client, given string) bool {
	now := s.now()
	for _, exp := range s.digestExpiries(now) {
		if s.keys.Verify(digestPurpose[purpose], given, exp, now, digestFields(c, cl)...) {
			return true
		}
	}
	return false
}

// playerFields are the signed fields of a player_digest: the camera's and
// the viewer's, with the viewer's access generation.
func playerFields(c db.Camera, cl db.Client, v viewer) []string {
	return append(digestFields(c, cl), itoa(v.id), itoa(v.gen))
}

// playerDigestFor returns today's player_digest of camera c of client cl
// for viewer v: "{viewer id}.{signature}".
func (s *Server) playerDigestFor(c db.Camera, cl db.Client, v viewer) string {
	return itoa(v.id) + "." + s.keys.Sign(sign.APIPlayer, s.digestExpiry(s.now()), playerFields(c, cl, v)...)
}

// splitPlayerDigest returns the viewer id and the signature of a
// player_digest; ok is false when it does not have that shape.
func splitPlayerDigest(pd string) (id int64, sig string, ok bool) {
	idS, sig, ok := strings.Cut(pd, ".")
	if !ok || idS == "" || len(idS) > 19 || len(sig) != sign.SigLen {
		return 0, "", false
	}
	id, err := strconv.ParseInt(idS, 10, 64)
	if err != nil || id < 0 || itoa(id) != idS {
		return 0, "", false
	}
	return id, sig, true
}

// checkPlayerDigest reports whether sig is the player_digest signature of
// camera c of client cl for viewer v of today, or of yesterday within the
// grace period.
func (s *Server) checkPlayerDigest(c db.Camera, cl db.Client, v viewer, sig string) bool {
	now := s.now()
	for _, exp := range s.digestExpiries(now) {
		if s.keys.Verify(sign.APIPlayer, sig, exp, now, playerFields(c, cl, v)...) {
			return true
		}
	}
	return false
}
