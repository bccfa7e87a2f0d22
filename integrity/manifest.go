package integrity

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"time"

	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

// ManifestName is the object name of an hour's manifest, beside the
// segments. Recording listings ignore it: it is neither a segment nor a gap
// record key.
const ManifestName = "manifest.json"

// Version is the manifest format version.
const Version = 1

// Entry is one stored segment of a manifest.
type Entry struct {
	// Key is the segment's object key.
	Key string `json:"key"`
	// Size is its length in bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of its bytes.
	SHA256 string `json:"sha256"`
	// Recovered says the hash was taken from the stored object when a
	// manifest that lagged behind its hour was completed at the next
	// start, not from the bytes as they were uploaded.
	Recovered bool `json:"recovered,omitempty"`
}

// Link names the previous manifest of the chain.
type Link struct {
	// Key is the previous manifest's object key.
	Key string `json:"key"`
	// Count is the number of entries it had when this manifest was begun.
	Count int `json:"count"`
	// SHA256 is the hex Digest of the previous manifest truncated to Count
	// entries.
	SHA256 string `json:"sha256"`
}

// Manifest lists the stored segments of one camera hour.
type Manifest struct {
	// Version is the format version (Version).
	Version int `json:"version"`
	// Camera is the camera id.
	Camera string `json:"camera"`
	// Hour is the UTC hour the segments start in, RFC 3339.
	Hour string `json:"hour"`
	// Prev links the previous manifest of the camera; nil starts a chain.
	Prev *Link `json:"prev,omitempty"`
	// Segments are the stored segments, in upload order.
	Segments []Entry `json:"segments"`
	// KeyID names the Ed25519 key that signed the manifest (sign.KeyID of
	// its public key); empty when it is unsigned.
	KeyID string `json:"key_id,omitempty"`
	// Signature is the base64 Ed25519 signature, by the key KeyID names, of
	// the manifest's canonical bytes without this field (SignedBytes).
	Signature string `json:"signature,omitempty"`
}

// ManifestKey returns the key of camera's manifest for the hour holding t,
// or "" when camera or t cannot be in a key.
func ManifestKey(camera string, t time.Time) string {
	p := storage.SegmentPrefix(camera, t)
	if p == "" {
		return ""
	}
	return p + ManifestName
}

// IsManifestKey reports whether key names an hour manifest.
func IsManifestKey(key string) bool { return path.Base(key) == ManifestName }

// newManifest returns an empty manifest of camera's hour holding t.
func newManifest(camera string, t time.Time) *Manifest {
	return &Manifest{Version: Version, Camera: camera, Hour: t.UTC().Truncate(time.Hour).Format(time.RFC3339), Segments: []Entry{}}
}

// Encode returns the canonical bytes of m: compact JSON, fields in the
// order of the type.
func (m *Manifest) Encode() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic("integrity: encode manifest: " + err.Error())
	}
	return b
}

// Digest returns the hex SHA-256 of the canonical bytes of m with only its
// first n entries (all of them when n is out of range), without its
// signature and key id: a link names the entries, whoever signed them.
func (m *Manifest) Digest(n int) string {
	c := *m
	c.KeyID, c.Signature = "", ""
	if n >= 0 && n <= len(m.Segments) {
		c.Segments = m.Segments[:n]
	}
	sum := sha256.Sum256(c.Encode())
	return hex.EncodeToString(sum[:])
}

// SignedBytes returns the bytes the signature covers: the canonical bytes
// of m with its key id and without its signature.
func (m *Manifest) SignedBytes() []byte {
	c := *m
	c.Signature = ""
	return c.Encode()
}

// Sign signs m with key, setting KeyID and Signature.
func (m *Manifest) Sign(key ed25519.PrivateKey) {
	m.KeyID = sign.KeyID(key.Public().(ed25519.PublicKey))
	m.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, m.SignedBytes()))
}

// CheckSignature checks m's signature with the key of keys its KeyID names.
// It returns nil when the signature verifies, ErrUnsigned, ErrUnknownKey or
// ErrBadSignature.
func (m *Manifest) CheckSignature(keys []ed25519.PublicKey) error {
	if m.Signature == "" || m.KeyID == "" {
		return ErrUnsigned
	}
	var pub ed25519.PublicKey
	for _, k := range keys {
		if sign.KeyID(k) == m.KeyID {
			pub = k
			break
		}
	}
	if pub == nil {
		return fmt.Errorf("%w: %s", ErrUnknownKey, m.KeyID)
	}
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil || !ed25519.Verify(pub, m.SignedBytes(), sig) {
		return ErrBadSignature
	}
	return nil
}

// Link returns the link a following manifest stores to name m at key.
func (m *Manifest) Link(key string) *Link {
	return &Link{Key: key, Count: len(m.Segments), SHA256: m.Digest(len(m.Segments))}
}

// Index returns the position of key's entry, or -1.
func (m *Manifest) Index(key string) int {
	for i, e := range m.Segments {
		if e.Key == key {
			return i
		}
	}
	return -1
}

// DecodeManifest parses a manifest.
func DecodeManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadManifest, err)
	}
	if m.Version != Version || !storage.ValidCameraID(m.Camera) {
		return nil, fmt.Errorf("%w: version %d camera %q", ErrBadManifest, m.Version, m.Camera)
	}
	if m.Segments == nil {
		m.Segments = []Entry{}
	}
	return &m, nil
}

// HourOf returns the UTC hour a manifest is for.
func (m *Manifest) HourOf() (time.Time, error) {
	t, err := time.Parse(time.RFC3339, m.Hour)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: hour %q", ErrBadManifest, m.Hour)
	}
	return t, nil
}
