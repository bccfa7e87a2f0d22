package integrity

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/vigia/vigia/storage"
)

// Defaults of RecorderConfig.
const (
	// DefaultStaleAfter is how long a camera's manifest stays cached
	// without a write before it is read again from storage: a little over
	// two segments of the default length, so a camera that went to another
	// node and came back is read again.
	DefaultStaleAfter = 3 * time.Minute
	// DefaultLookBack is how far back a camera's previous manifest is
	// looked for when a chain is continued after a start.
	DefaultLookBack = 7 * 24 * time.Hour
)

// RecorderConfig configures a Recorder.
type RecorderConfig struct {
	// Store holds the segments and manifests. Required.
	Store storage.Store
	// StaleAfter is how long a camera's manifest stays cached without a
	// write; after that it is read again (the camera may have been recorded
	// by another node meanwhile). It defaults to DefaultStaleAfter.
	StaleAfter time.Duration
	// LookBack bounds the search for the previous manifest of a chain. It
	// defaults to DefaultLookBack.
	LookBack time.Duration
	// Now is the clock. It defaults to time.Now.
	Now func() time.Time
	// Log receives the failures. It defaults to a no-op logger.
	Log *zap.Logger
	// Registerer, optional, receives vigia_integrity_manifest_failures_total
	// (the failures Stored counts).
	Registerer prometheus.Registerer
	// SignKey signs every manifest written (Manifest.Sign): the deployment's
	// Ed25519 key, derived from security.secret. Nil writes them unsigned.
	SignKey ed25519.PrivateKey
}

// Recorder appends stored segments to their hour's manifest: one manifest
// write per segment. It is safe for concurrent use; calls for one camera
// are serialised.
//
// A manifest that lags behind its hour (the process stopped between a
// segment's upload and the manifest's write, or the write failed) is
// completed when the camera's manifest is next read: the hour's segments
// that the manifest lacks are hashed from storage and appended, marked
// Recovered.
type Recorder struct {
	cfg      RecorderConfig
	mu       sync.Mutex
	cams     map[string]*camState
	failures prometheus.Counter
}

type camState struct {
	mu      sync.Mutex
	key     string // key of cur
	cur     *Manifest
	touched time.Time
	dirty   bool // cur's last write failed
}

// NewRecorder returns a Recorder.
func NewRecorder(cfg RecorderConfig) *Recorder {
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	if cfg.LookBack <= 0 {
		cfg.LookBack = DefaultLookBack
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	r := &Recorder{cfg: cfg, cams: map[string]*camState{}, failures: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "vigia_integrity_manifest_failures_total",
		Help: "Segment manifest writes that failed; the next write of the camera's hour, or the next start, completes the manifest.",
	})}
	if cfg.Registerer != nil {
		_ = cfg.Registerer.Register(r.failures)
	}
	return r
}

// Stored is the upload path's hook: Record, with a failure counted and
// logged rather than returned. The segment is stored either way, and its
// hour's manifest is completed by the camera's next manifest write or the
// next start.
func (r *Recorder) Stored(ctx context.Context, key string, size int64, sum [32]byte) {
	if err := r.Record(ctx, key, size, sum); err != nil {
		r.failures.Inc()
		r.cfg.Log.Warn("segment manifest not written", zap.String("key", key), zap.Error(err))
	}
}

func (r *Recorder) state(camera string) *camState {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.cams[camera]
	if s == nil {
		s = &camState{}
		r.cams[camera] = s
	}
	return s
}

// Record adds the stored segment key (size bytes, SHA-256 sum) to its hour's
// manifest and writes the manifest.
func (r *Recorder) Record(ctx context.Context, key string, size int64, sum [32]byte) error {
	camera, startMs, _, _, err := storage.ParseSegmentKey(key)
	if err != nil {
		return err
	}
	hour := time.UnixMilli(startMs).UTC().Truncate(time.Hour)
	mkey := ManifestKey(camera, hour)
	e := Entry{Key: key, Size: size, SHA256: hex.EncodeToString(sum[:])}

	s := r.state(camera)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := r.cfg.Now()
	if s.cur != nil && now.Sub(s.touched) > r.cfg.StaleAfter {
		s.cur, s.key = nil, ""
	}
	var m *Manifest
	switch {
	case s.cur != nil && s.key == mkey:
		m = s.cur
	case s.cur != nil && hourOf(s.cur).Before(hour):
		// A new hour: continue the chain from the cached manifest, which
		// must be stored as the link names it.
		if s.dirty {
			if err := r.write(ctx, s.key, s.cur); err != nil {
				return err
			}
			s.dirty = false
		}
		m, err = r.read(ctx, mkey)
		if err != nil {
			return err
		}
		if m == nil {
			m = newManifest(camera, hour)
			m.Prev = s.cur.Link(s.key)
		} else if err := r.complete(ctx, m, hour, key); err != nil {
			return err
		}
		s.cur, s.key = m, mkey
	case s.cur != nil:
		// A late segment of an older hour (spooled across a restart).
		m, err = r.read(ctx, mkey)
		if err != nil {
			return err
		}
		if m == nil {
			m = newManifest(camera, hour)
		}
	default:
		m, err = r.load(ctx, camera, hour, key)
		if err != nil {
			return err
		}
		s.cur, s.key = m, mkey
	}
	s.touched = now
	if i := m.Index(key); i >= 0 {
		// Stored again (an upload retried after its manifest write): the
		// entry keeps its place and takes the new bytes' hash.
		m.Segments[i] = e
	} else {
		m.Segments = append(m.Segments, e)
	}
	err = r.write(ctx, mkey, m)
	if m == s.cur {
		s.dirty = err != nil
	}
	return err
}

// load reads camera's manifest of hour, or begins it linked to the latest
// earlier manifest; both are completed with the segments they lack.
func (r *Recorder) load(ctx context.Context, camera string, hour time.Time, skip string) (*Manifest, error) {
	mkey := ManifestKey(camera, hour)
	m, err := r.read(ctx, mkey)
	if err != nil {
		return nil, err
	}
	if m != nil {
		return m, r.complete(ctx, m, hour, skip)
	}
	m = newManifest(camera, hour)
	pkey, prev, err := r.previous(ctx, camera, hour)
	if err != nil {
		return nil, err
	}
	if prev != nil {
		pt := hourOf(prev)
		n := len(prev.Segments)
		if err := r.complete(ctx, prev, pt, ""); err != nil {
			return nil, err
		}
		if len(prev.Segments) != n {
			if err := r.write(ctx, pkey, prev); err != nil {
				return nil, err
			}
		}
		m.Prev = prev.Link(pkey)
	}
	return m, r.complete(ctx, m, hour, skip)
}

// previous finds camera's latest manifest of an hour before hour, within
// LookBack: one listing per day folder, newest first.
func (r *Recorder) previous(ctx context.Context, camera string, hour time.Time) (string, *Manifest, error) {
	for d := time.Duration(0); d <= r.cfg.LookBack; d += 24 * time.Hour {
		day := hour.Add(-d)
		dayPrefix := storage.SegmentPrefix(camera, day)
		dayPrefix = dayPrefix[:len(dayPrefix)-len("HH/")]
		var hours []string
		for page, err := range storage.Pages(ctx, r.cfg.Store, dayPrefix, storage.ListOptions{Delimiter: "/"}) {
			if err != nil {
				return "", nil, fmt.Errorf("list %s: %w", dayPrefix, err)
			}
			hours = append(hours, page.CommonPrefixes...)
		}
		slices.Reverse(hours)
		for _, p := range hours {
			if p >= storage.SegmentPrefix(camera, hour) {
				continue
			}
			m, err := r.read(ctx, p+ManifestName)
			if err != nil {
				return "", nil, err
			}
			if m != nil {
				return p + ManifestName, m, nil
			}
		}
	}
	return "", nil, nil
}

// complete appends to m, marked Recovered, the stored segments of its hour
// it lacks, other than skip.
func (r *Recorder) complete(ctx context.Context, m *Manifest, hour time.Time, skip string) error {
	prefix := storage.SegmentPrefix(m.Camera, hour)
	have := map[string]bool{}
	for _, e := range m.Segments {
		have[e.Key] = true
	}
	for o, err := range storage.Walk(ctx, r.cfg.Store, prefix) {
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		if have[o.Key] || o.Key == skip {
			continue
		}
		if _, _, _, _, err := storage.ParseSegmentKey(o.Key); err != nil {
			continue
		}
		sum, n, err := hashObject(ctx, r.cfg.Store, o.Key)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		m.Segments = append(m.Segments, Entry{Key: o.Key, Size: n, SHA256: hex.EncodeToString(sum[:]), Recovered: true})
		r.cfg.Log.Info("segment missing from its manifest added", zap.String("key", o.Key))
	}
	return nil
}

func (r *Recorder) read(ctx context.Context, key string) (*Manifest, error) {
	return ReadManifest(ctx, r.cfg.Store, key)
}

func (r *Recorder) write(ctx context.Context, key string, m *Manifest) error {
	if r.cfg.SignKey != nil {
		m.Sign(r.cfg.SignKey)
	}
	b := m.Encode()
	if err := r.cfg.Store.Put(ctx, key, bytes.NewReader(b), int64(len(b)), storage.PutOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("write manifest %s: %w", key, err)
	}
	return nil
}

// ReadManifest reads the manifest at key; a missing one is nil, no error.
func ReadManifest(ctx context.Context, st storage.Store, key string) (*Manifest, error) {
	rc, err := st.Get(ctx, key, 0, -1)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", key, err)
	}
	m, err := DecodeManifest(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return m, nil
}

// hashObject returns the SHA-256 and length of a stored object.
func hashObject(ctx context.Context, st storage.Store, key string) ([32]byte, int64, error) {
	rc, err := st.Get(ctx, key, 0, -1)
	if err != nil {
		return [32]byte{}, 0, err
	}
	defer rc.Close()
	return HashAll(rc)
}

func hourOf(m *Manifest) time.Time {
	t, _ := m.HourOf()
	return t
}
