package player

import (
	"container/list"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/storage"
)

// RenditionConfig configures RenditionHandler.
type RenditionConfig struct {
	// Open reads a stored segment whole (storage.Store.Get). Required.
	Open func(ctx context.Context, key string) (io.ReadCloser, error)

	// Transcode returns the H.264 rendition of a segment, or nil without
	// error when the segment plays as it is (its video is H.264).
	// Required.
	Transcode func(segment []byte) ([]byte, error)

	// Camera returns the camera id of a request. It defaults to the path
	// value "id". The API checks access before the handler runs.
	Camera func(r *http.Request) string

	// CacheBytes bounds the renditions kept in memory, least recently
	// used first out. It defaults to 256 MiB.
	CacheBytes int64

	// Workers bounds the segments transcoded at once; other requests
	// wait. It defaults to 1.
	Workers int

	// MaxSegmentBytes bounds a segment read. It defaults to 256 MiB.
	MaxSegmentBytes int64

	// Timeout bounds reading and transcoding one segment. It defaults to
	// 60 seconds.
	Timeout time.Duration

	// Log receives failures. Optional.
	Log *zap.Logger
}

// RenditionHandler serves the H.264 rendition of a camera's recorded
// segments, for browsers that decode no H.265: GET with key (the
// segment's storage key, of the request's camera) and part=init (the init
// segment) or part=media (the fragments). A segment is transcoded on its
// first request, by at most Workers at once, and kept in a cache bounded
// by CacheBytes; requests for a segment being transcoded wait for it. A
// segment already in H.264 is served as stored. Answers: 200; 400 for a
// missing part; 404 for a key that is not one of the camera's segments;
// 502 when reading or transcoding fails.
func RenditionHandler(cfg RenditionConfig) http.Handler {
	if cfg.Camera == nil {
		cfg.Camera = func(r *http.Request) string { return r.PathValue("id") }
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 256 << 20
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.MaxSegmentBytes <= 0 {
		cfg.MaxSegmentBytes = 256 << 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	h := &renditions{cfg: cfg, sem: make(chan struct{}, cfg.Workers), byKey: map[string]*list.Element{}, lru: list.New()}
	return h
}

// renditions is RenditionHandler's state: the cache and the segments in
// work.
type renditions struct {
	cfg RenditionConfig
	sem chan struct{}

	mu    sync.Mutex
	byKey map[string]*list.Element // of *rendEntry
	lru   *list.List               // front: most recently used
	bytes int64
}

// rendEntry is one segment's rendition, ready once done is closed.
type rendEntry struct {
	key  string
	done chan struct{}
	data []byte
	init int // bytes of the init segment
	err  error
}

func (h *renditions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	key, part := q.Get("key"), q.Get("part")
	if part != "init" && part != "media" {
		http.Error(w, "part: must be init or media", http.StatusBadRequest)
		return
	}
	cam, _, _, _, err := storage.ParseSegmentKey(key)
	if err != nil || cam != h.cfg.Camera(r) {
		http.Error(w, "no such segment", http.StatusNotFound)
		return
	}
	e := h.get(key)
	select {
	case <-e.done:
	case <-r.Context().Done():
		return
	}
	if e.err != nil {
		http.Error(w, "rendition failed", http.StatusBadGateway)
		return
	}
	b := e.data[:e.init]
	if part == "media" {
		b = e.data[e.init:]
	}
	w.Header().Set("Content-Type", "video/mp4")
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(b)
	}
}

// get returns key's entry, starting its transcode when it has none.
func (h *renditions) get(key string) *rendEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	if el := h.byKey[key]; el != nil {
		h.lru.MoveToFront(el)
		return el.Value.(*rendEntry)
	}
	e := &rendEntry{key: key, done: make(chan struct{})}
	h.byKey[key] = h.lru.PushFront(e)
	go h.make(e)
	return e
}

// make transcodes e's segment, then accounts it in the cache (or drops
// it on failure, so that a later request tries again).
func (h *renditions) make(e *rendEntry) {
	h.sem <- struct{}{}
	e.data, e.init, e.err = h.transcode(e.key)
	<-h.sem
	h.mu.Lock()
	if e.err != nil {
		if el := h.byKey[e.key]; el != nil && el.Value == e {
			h.lru.Remove(el)
			delete(h.byKey, e.key)
		}
		h.cfg.Log.Warn("recorded H.264 rendition failed", zap.String("key", e.key), zap.Error(e.err))
	} else {
		h.bytes += int64(len(e.data))
		for h.bytes > h.cfg.CacheBytes && h.lru.Len() > 1 {
			old := h.lru.Back().Value.(*rendEntry)
			if old == e {
				break
			}
			select {
			case <-old.done:
			default:
				h.lru.MoveToFront(h.lru.Back()) // in work: not accounted yet
				continue
			}
			h.lru.Remove(h.lru.Back())
			delete(h.byKey, old.key)
			h.bytes -= int64(len(old.data))
		}
	}
	h.mu.Unlock()
	close(e.done)
}

func (h *renditions) transcode(key string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.Timeout)
	defer cancel()
	rc, err := h.cfg.Open(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	data, err := io.ReadAll(io.LimitReader(rc, h.cfg.MaxSegmentBytes+1))
	_ = rc.Close()
	if err != nil {
		return nil, 0, err
	}
	if int64(len(data)) > h.cfg.MaxSegmentBytes {
		return nil, 0, fmt.Errorf("segment larger than %d bytes", h.cfg.MaxSegmentBytes)
	}
	out, err := h.cfg.Transcode(data)
	if err != nil {
		return nil, 0, err
	}
	if out == nil {
		out = data
	}
	init := topBox(out, "moof")
	if init <= 0 {
		return nil, 0, fmt.Errorf("rendition of %s has no fragment", key)
	}
	return out, init, nil
}

// topBox returns the offset of the first top-level MP4 box of type typ,
// or -1.
func topBox(b []byte, typ string) int {
	for off := 0; off+8 <= len(b); {
		if string(b[off+4:off+8]) == typ {
			return off
		}
		size := int(binary.BigEndian.Uint32(b[off:]))
		if size < 8 || size > len(b)-off {
			return -1
		}
		off += size
	}
	return -1
}
