package export

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/storage"
)

// ManifestVersion is the version of the downloadable video manifest format.
const ManifestVersion = 1

// Manifest describes a downloadable video for whoever receives it: what it
// was made from, its hash and the gaps inside it. Its bytes as stored are
// signed with Ed25519 (docs/export.md).
type Manifest struct {
	// Version is ManifestVersion.
	Version int `json:"version"`
	// Video is the video's object key; VideoSize its length and
	// VideoSHA256 the hex SHA-256 of its bytes.
	Video       string `json:"video"`
	VideoSize   int64  `json:"video_size"`
	VideoSHA256 string `json:"video_sha256"`
	// Camera is the camera id.
	Camera string `json:"camera"`
	// From and To are the requested range; Start and End the video's own
	// timeline (from the keyframe at or before From). RFC 3339, UTC, ms.
	From  string `json:"from"`
	To    string `json:"to"`
	Start string `json:"start"`
	End   string `json:"end"`
	// Segments are the recording segments read, in order.
	Segments []ManifestSegment `json:"segments"`
	// Transcoded counts the segments whose video was transcoded to H.264
	// for this file (a job asking for H.264 of H.265 recordings): its
	// frames are the node's encoding of theirs, whose recorded bytes
	// Segments hashes. Absent when the video is copied as recorded.
	Transcoded int `json:"transcoded,omitempty"`
	// Chain pins the hour manifests the segments are listed in: each
	// manifest's key, entry count and digest when the video was made
	// (docs/storage.md, Integrity).
	Chain []integrity.Link `json:"chain"`
	// Gaps are the stretches inside the video without recording, with
	// their causes.
	Gaps []ManifestGap `json:"gaps"`
	// Created is when the manifest was made.
	Created string `json:"created"`
	// KeyID names the public key that verifies the signature
	// (sign.KeyID).
	KeyID string `json:"key_id"`
}

// ManifestSegment is a source segment of a video.
type ManifestSegment struct {
	// Key is the segment's object key; Size its length.
	Key  string `json:"key"`
	Size int64  `json:"size"`
	// SHA256 is the hex SHA-256 of the bytes the video was made from.
	SHA256 string `json:"sha256"`
	// Manifest is the key of the hour manifest that lists the segment with
	// this hash; empty when none does (a changed segment, or one stored
	// before manifests were kept).
	Manifest string `json:"manifest,omitempty"`
}

// ManifestGap is a gap inside a video.
type ManifestGap struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Cause string `json:"cause"`
}

// ManifestKey returns the key of video id's manifest: videos/{id}.manifest.json.
func ManifestKey(id int64) string {
	if id < 0 {
		return ""
	}
	return storage.PrefixVideos + strconv.FormatInt(id, 10) + ".manifest.json"
}

// SignatureKey returns the key of the detached signature of video id's
// manifest: videos/{id}.manifest.sig, the 64 raw bytes of the Ed25519
// signature.
func SignatureKey(id int64) string {
	if id < 0 {
		return ""
	}
	return storage.PrefixVideos + strconv.FormatInt(id, 10) + ".manifest.sig"
}

func rfc3339(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// NewManifest describes clip, stored at videoKey and made for req. The
// source segments are looked up in their hour manifests; cat, when set,
// gives the gaps' causes (otherwise they are "unknown").
func NewManifest(ctx context.Context, st storage.Store, cat *catalogue.Catalogue, videoKey string, req Request, clip *Clip, now time.Time) (*Manifest, error) {
	sum, n, err := integrity.HashAll(clip.Reader())
	if err != nil {
		return nil, fmt.Errorf("hash video: %w", err)
	}
	m := &Manifest{Version: ManifestVersion, Video: videoKey, VideoSize: n, VideoSHA256: hex.EncodeToString(sum[:]),
		Camera: req.Camera, From: rfc3339(req.Start), To: rfc3339(req.End), Start: rfc3339(clip.Start), End: rfc3339(clip.End),
		Segments: []ManifestSegment{}, Chain: []integrity.Link{}, Gaps: []ManifestGap{}, Created: rfc3339(now), Transcoded: clip.Transcoded}
	hours := map[string]*integrity.Manifest{}
	for _, src := range clip.Sources {
		ms := ManifestSegment{Key: src.Key, Size: src.Size, SHA256: hex.EncodeToString(src.SHA256[:])}
		if _, startMs, _, _, err := storage.ParseSegmentKey(src.Key); err == nil {
			mkey := integrity.ManifestKey(req.Camera, time.UnixMilli(startMs))
			hm, seen := hours[mkey]
			if !seen {
				if hm, err = integrity.ReadManifest(ctx, st, mkey); err != nil && !errors.Is(err, integrity.ErrBadManifest) {
					return nil, err
				}
				hours[mkey] = hm
				if hm != nil {
					m.Chain = append(m.Chain, *hm.Link(mkey))
				}
			}
			if hm != nil {
				if i := hm.Index(src.Key); i >= 0 && hm.Segments[i].SHA256 == ms.SHA256 && hm.Segments[i].Size == ms.Size {
					ms.Manifest = mkey
				}
			}
		}
		m.Segments = append(m.Segments, ms)
	}
	if cat != nil {
		tl, err := cat.Timeline(ctx, req.Camera, clip.Start, clip.End, catalogue.TimelineOptions{})
		if err != nil {
			return nil, err
		}
		for _, g := range tl.Gaps {
			m.Gaps = append(m.Gaps, ManifestGap{From: rfc3339(time.UnixMilli(g.StartMs)), To: rfc3339(time.UnixMilli(g.EndMs)), Cause: string(g.Cause)})
		}
	} else {
		for _, g := range clip.Gaps {
			m.Gaps = append(m.Gaps, ManifestGap{From: rfc3339(g.From), To: rfc3339(g.To), Cause: "unknown"})
		}
	}
	return m, nil
}

// Encode returns the manifest's bytes: indented JSON ending in a newline.
// These bytes, as stored, are what the signature covers.
func (m *Manifest) Encode() []byte {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic("export: encode manifest: " + err.Error())
	}
	return append(b, '\n')
}

// Sign returns the manifest's bytes and their Ed25519 signature by key,
// after setting KeyID.
func (m *Manifest) Sign(key ed25519.PrivateKey, keyID string) (body, sig []byte) {
	m.KeyID = keyID
	body = m.Encode()
	return body, ed25519.Sign(key, body)
}

// ErrNotVerified is wrapped by every verification failure of VerifyVideo.
var ErrNotVerified = errors.New("video not verified")

// VerifyVideo checks a downloadable video against its manifest: the
// signature of the manifest's bytes by pub, then the video's length and
// SHA-256. It returns the parsed manifest.
func VerifyVideo(video io.Reader, body, sig []byte, pub ed25519.PublicKey) (*Manifest, error) {
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, body, sig) {
		return nil, fmt.Errorf("%w: the manifest's signature does not match the key", ErrNotVerified)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil || m.Version != ManifestVersion {
		return nil, fmt.Errorf("%w: manifest version %d: %v", ErrNotVerified, m.Version, err)
	}
	sum, n, err := integrity.HashAll(video)
	if err != nil {
		return nil, fmt.Errorf("read video: %w", err)
	}
	if got := hex.EncodeToString(sum[:]); n != m.VideoSize || got != m.VideoSHA256 {
		return &m, fmt.Errorf("%w: video sha256 %s (%d bytes), manifest %s (%d bytes)", ErrNotVerified, got, n, m.VideoSHA256, m.VideoSize)
	}
	return &m, nil
}
