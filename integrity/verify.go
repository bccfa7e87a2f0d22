package integrity

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/vigia/vigia/storage"
)

// Kinds of Problem.
const (
	// ProblemChanged: the stored bytes of a listed segment differ from its
	// manifest entry.
	ProblemChanged = "changed"
	// ProblemRemoved: a listed segment is missing from storage, and no
	// quota retention record explains it.
	ProblemRemoved = "removed"
	// ProblemUnlisted: a stored segment is in no manifest (stored after the
	// last manifest write, or put there by something else).
	ProblemUnlisted = "unlisted"
	// ProblemChain: a manifest's link does not match the previous manifest
	// (it was changed, or removed while later manifests remain).
	ProblemChain = "chain"
	// ProblemManifest: a manifest cannot be read.
	ProblemManifest = "manifest"
	// ProblemSignature: a manifest's signature does not verify with the
	// key its key id names (it changed after it was signed), or it is
	// unsigned while keys were given.
	ProblemSignature = "signature"
	// ProblemKey: a manifest is signed by a key not among those given (a
	// secret older than the previous one: give its public key).
	ProblemKey = "key"
)

// QuotaCause is the gap cause of segments deleted by quota retention; a
// listed segment a gap record of this cause covers is expired, not removed.
const QuotaCause = "retention_quota"

// Problem is one finding of Verify.
type Problem struct {
	// Kind is one of the Problem* constants.
	Kind string `json:"kind"`
	// Key is the segment's (or manifest's) object key.
	Key string `json:"key"`
	// Detail explains the finding.
	Detail string `json:"detail,omitempty"`
}

// Report is what Verify found.
type Report struct {
	// Manifests is the number of hour manifests read.
	Manifests int `json:"manifests"`
	// Segments is the number of listed segments checked.
	Segments int `json:"segments"`
	// Expired is the number of listed segments deleted by quota retention.
	Expired int `json:"expired"`
	// Signed is the number of manifests whose signature verified with one
	// of the keys given.
	Signed int `json:"signed"`
	// Problems are the findings, in key order per hour.
	Problems []Problem `json:"problems"`
}

// OK reports whether nothing was found.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Verify checks camera's segments that start in [from, to) against their
// manifests: every listed segment is read and hashed; segments missing or
// changed, stored segments no manifest lists, and manifest links that do
// not match are reported. With keys, every manifest must also carry a
// signature that verifies with the key of keys its key id names (the
// deployment's current and earlier public keys); without, signatures are
// not checked.
func Verify(ctx context.Context, st storage.Store, camera string, from, to time.Time, keys ...ed25519.PublicKey) (Report, error) {
	var rep Report
	if !storage.ValidCameraID(camera) || !to.After(from) {
		return rep, fmt.Errorf("verify: camera %q from %v to %v: invalid range", camera, from, to)
	}
	fromMs, toMs := from.UnixMilli(), to.UnixMilli()
	in := func(startMs int64) bool { return startMs >= fromMs && startMs < toMs }
	for h := from.UTC().Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
		mkey := ManifestKey(camera, h)
		stored := map[string]int64{}
		var quotaGaps [][2]int64
		for o, err := range storage.Walk(ctx, st, storage.SegmentPrefix(camera, h)) {
			if err != nil {
				return rep, err
			}
			e, err := storage.ParseRecordingKey(o.Key)
			if err != nil || e.Camera != camera {
				continue
			}
			switch {
			case e.Kind == storage.KindSegment:
				stored[o.Key] = e.StartMs
			case e.Kind == storage.KindGap && e.Cause == QuotaCause:
				quotaGaps = append(quotaGaps, [2]int64{e.StartMs, e.StartMs + e.DurMs})
			}
		}
		m, err := ReadManifest(ctx, st, mkey)
		if err != nil {
			if errors.Is(err, ErrBadManifest) {
				rep.Problems = append(rep.Problems, Problem{Kind: ProblemManifest, Key: mkey, Detail: err.Error()})
				continue
			}
			return rep, err
		}
		if m != nil {
			rep.Manifests++
			if len(keys) > 0 {
				if p := checkSignature(m, mkey, keys); p != nil {
					rep.Problems = append(rep.Problems, *p)
				} else {
					rep.Signed++
				}
			}
			if p := checkLink(ctx, st, m, mkey); p != nil {
				rep.Problems = append(rep.Problems, *p)
			}
			for _, e := range m.Segments {
				_, startMs, _, _, err := storage.ParseSegmentKey(e.Key)
				if err != nil || !in(startMs) {
					continue
				}
				rep.Segments++
				delete(stored, e.Key)
				sum, n, err := hashObject(ctx, st, e.Key)
				switch {
				case errors.Is(err, storage.ErrNotFound):
					if covered(quotaGaps, startMs) {
						rep.Expired++
						continue
					}
					rep.Problems = append(rep.Problems, Problem{Kind: ProblemRemoved, Key: e.Key, Detail: "listed in " + mkey})
				case err != nil:
					return rep, err
				case n != e.Size || hex.EncodeToString(sum[:]) != e.SHA256:
					rep.Problems = append(rep.Problems, Problem{Kind: ProblemChanged, Key: e.Key,
						Detail: fmt.Sprintf("sha256 %x (%d bytes), manifest %s (%d bytes)", sum, n, e.SHA256, e.Size)})
				}
			}
		}
		for key, startMs := range stored {
			if in(startMs) {
				rep.Problems = append(rep.Problems, Problem{Kind: ProblemUnlisted, Key: key, Detail: "in no manifest"})
			}
		}
	}
	return rep, nil
}

// checkLink checks m's link to the previous manifest. A previous manifest
// that no longer exists is a problem only when it is of the hour just
// before m's: an older one may have expired with its hour.
func checkLink(ctx context.Context, st storage.Store, m *Manifest, mkey string) *Problem {
	if m.Prev == nil {
		return nil
	}
	prev, err := ReadManifest(ctx, st, m.Prev.Key)
	if err != nil {
		return &Problem{Kind: ProblemChain, Key: m.Prev.Key, Detail: err.Error()}
	}
	if prev == nil {
		if hm, err := m.HourOf(); err == nil && m.Prev.Key == ManifestKey(m.Camera, hm.Add(-time.Hour)) {
			return &Problem{Kind: ProblemChain, Key: m.Prev.Key, Detail: "previous manifest named by " + mkey + " is missing"}
		}
		return nil
	}
	if m.Prev.Count > len(prev.Segments) || prev.Digest(m.Prev.Count) != m.Prev.SHA256 {
		return &Problem{Kind: ProblemChain, Key: m.Prev.Key, Detail: "does not match the link in " + mkey}
	}
	return nil
}

// checkSignature checks the signature of m, stored at mkey.
func checkSignature(m *Manifest, mkey string, keys []ed25519.PublicKey) *Problem {
	err := m.CheckSignature(keys)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnknownKey):
		return &Problem{Kind: ProblemKey, Key: mkey, Detail: "signed by key " + m.KeyID + ", not among the keys given"}
	default:
		return &Problem{Kind: ProblemSignature, Key: mkey, Detail: err.Error()}
	}
}

func covered(gaps [][2]int64, ms int64) bool {
	for _, g := range gaps {
		if ms >= g[0] && ms < g[1] {
			return true
		}
	}
	return false
}
