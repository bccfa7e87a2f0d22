package sign

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"time"
)

// Purpose names what a key is for; it is part of the key derivation.
type Purpose string

// The purposes of the keys derived from the security secret.
const (
	// APIDigest signs the digest of camera API requests (recordings,
	// thumbnails, snapshots).
	APIDigest Purpose = "api digest"
	// APIHash signs the hash of camera video requests.
	APIHash Purpose = "api hash"
	// APIPlayer signs the player_digest of the player page and its
	// playlists.
	APIPlayer Purpose = "api player"
	// StorageURL signs the URLs of the fs storage backend.
	StorageURL Purpose = "storage url"
	// LiveURL signs live stream tokens.
	LiveURL Purpose = "live url"
	// RTMPKey derives the stream keys of RTMP push cameras.
	RTMPKey Purpose = "rtmp push key"
	// LPRKey derives the keys of the URLs cameras push plate reads to.
	LPRKey Purpose = "lpr push key"
	// ONVIFNotifyKey derives the keys of the URLs cameras in ONVIF push
	// mode send their events to.
	ONVIFNotifyKey Purpose = "onvif notify key"
	// CameraSeal is the AES-256-GCM key that seals camera credentials.
	CameraSeal Purpose = "camera credentials"
	// ExportManifest is the seed of the Ed25519 key that signs the
	// manifests of downloadable videos (ed25519.go).
	ExportManifest Purpose = "export manifest"
)

// Purposes returns every purpose.
func Purposes() []Purpose {
	return []Purpose{APIDigest, APIHash, APIPlayer, StorageURL, LiveURL, RTMPKey, LPRKey, ONVIFNotifyKey, CameraSeal, ExportManifest}
}

// MinSecretLen is the shortest secret accepted, in bytes.
const MinSecretLen = 16

// SigLen is the length of a signature in hex digits (128 bits).
const SigLen = 32

// ErrShortSecret is returned for a secret shorter than MinSecretLen.
var ErrShortSecret = errors.New("secret is shorter than 16 bytes")

// Derive returns the 32-byte key of purpose p under secret.
func Derive(secret []byte, p Purpose) []byte {
	k, err := hkdf.Key(sha256.New, secret, nil, "vigia "+string(p)+" v1", 32)
	if err != nil {
		// HKDF-SHA256 fails only for lengths over 255*32 bytes.
		panic("sign: derive: " + err.Error())
	}
	return k
}

// keyset is the derived keys of one secret.
type keyset map[Purpose][]byte

func derive(secret []byte) keyset {
	ks := keyset{}
	for _, p := range Purposes() {
		ks[p] = Derive(secret, p)
	}
	return ks
}

// Keys is the key set of the security secret, with the previous secret
// during a rotation. It is safe for concurrent use; it never changes after
// it is made.
type Keys struct {
	cur       keyset
	prev      keyset // nil without a rotation
	prevUntil time.Time
}

// New returns the keys of secret.
func New(secret []byte) (*Keys, error) {
	if len(secret) < MinSecretLen {
		return nil, ErrShortSecret
	}
	return &Keys{cur: derive(secret)}, nil
}

// WithPrevious returns keys that also verify values signed under prev
// until until (exclusive), and open values sealed under prev.
func (k *Keys) WithPrevious(prev []byte, until time.Time) (*Keys, error) {
	if len(prev) < MinSecretLen {
		return nil, fmt.Errorf("previous %w", ErrShortSecret)
	}
	return &Keys{cur: k.cur, prev: derive(prev), prevUntil: until}, nil
}

// Key returns the key of p under the current secret: the key that signs
// and seals. p is one of Purposes (another is a programming error, and
// panics).
func (k *Keys) Key(p Purpose) []byte { return k.key(k.cur, p) }

// Previous returns the key of p under the previous secret, whatever the
// time; ok is false without one. Opening sealed values uses it.
func (k *Keys) Previous(p Purpose) (key []byte, ok bool) {
	if k.prev == nil {
		return nil, false
	}
	return k.key(k.prev, p), true
}

// PreviousUntil returns when the previous secret stops verifying; zero
// without one.
func (k *Keys) PreviousUntil() time.Time { return k.prevUntil }

func (k *Keys) key(ks keyset, p Purpose) []byte {
	key, ok := ks[p]
	if !ok {
		panic("sign: unknown purpose " + string(p))
	}
	return key
}

// Sign returns the signature of fields for purpose p, valid until exp (a
// zero exp: no expiry), under the current secret.
func (k *Keys) Sign(p Purpose, exp time.Time, fields ...string) string {
	return hex.EncodeToString(mac(k.Key(p), exp, fields))
}

// Verify reports whether sig is the signature of fields for purpose p until
// exp, under the current secret or, before its end, the previous one; and
// that exp (unless zero) is not earlier than now, to the second.
func (k *Keys) Verify(p Purpose, sig string, exp, now time.Time, fields ...string) bool {
	if len(sig) != SigLen {
		return false
	}
	// Compared as text, so only the canonical (lowercase) form verifies.
	got := []byte(sig)
	ok := hmac.Equal(got, []byte(hex.EncodeToString(mac(k.Key(p), exp, fields))))
	if !ok && k.prev != nil && now.Before(k.prevUntil) {
		ok = hmac.Equal(got, []byte(hex.EncodeToString(mac(k.key(k.prev, p), exp, fields))))
	}
	return ok && (exp.IsZero() || now.Unix() <= exp.Unix())
}

// mac is the truncated HMAC of the expiry and the length-prefixed fields.
func mac(key []byte, exp time.Time, fields []string) []byte {
	m := hmac.New(sha256.New, key)
	var e int64
	if !exp.IsZero() {
		e = exp.Unix()
	}
	var b [binary.MaxVarintLen64]byte
	m.Write(b[:binary.PutVarint(b[:], e)])
	for _, f := range fields {
		writeField(m, f)
	}
	return m.Sum(nil)[:SigLen/2]
}

func writeField(m hash.Hash, f string) {
	var b [binary.MaxVarintLen64]byte
	m.Write(b[:binary.PutUvarint(b[:], uint64(len(f)))])
	m.Write([]byte(f))
}
