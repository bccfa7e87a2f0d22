package api

import (
	"bytes"
	"context"
	"errors"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/api/lpr"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

// lprEventType is the event type of a plate read (spec part 6).
const lprEventType = 7

// LPRConfig configures the plate read ingress, POST
// /api/v1/lpr/{id}/{key} (docs/events.md).
type LPRConfig struct {
	// BodyLimit is the largest plate read body, pictures included. It
	// defaults to 4 MiB.
	BodyLimit int64
	// Rate is how many plate reads per second one camera may push on
	// average. It defaults to 5.
	Rate float64
	// Burst is how many plate reads one camera may push at once. It
	// defaults to 20.
	Burst int
}

// lprFuture is how far ahead of the server's clock a camera's read time
// may be before the server's clock replaces it.
const lprFuture = 5 * time.Minute

// lprKey returns the key of camera id's plate read URL: the signature of
// the id for purpose sign.LPRKey, without expiry, under the current secret
// (as camera.PushKey derives RTMP stream keys).
func (s *Server) lprKey(id string) string {
	return s.keys.Sign(sign.LPRKey, time.Time{}, id)
}

// lprURL is where camera id pushes its plate reads; the key in the path
// authenticates the camera.
func (s *Server) lprURL(id int64) string {
	return s.cfg.PublicURL + "/api/v1/lpr/" + camID(id) + "/" + s.lprKey(camID(id))
}

// pushLPR is POST /api/v1/lpr/{id}/{key}: a camera pushes a plate read,
// stored as an event of type 7 with its plate, confidence and picture.
func (s *Server) pushLPR(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	cam := camID(id)
	now := s.now()
	if !s.keys.Verify(sign.LPRKey, r.PathValue("key"), time.Time{}, now, cam) {
		return fail(http.StatusForbidden, "invalid camera key")
	}
	if wait, ok := s.lprRate.allow(cam, now); !ok {
		ae := fail(http.StatusTooManyRequests, "too many plate reads from this camera")
		ae.header = map[string]string{"Retry-After": strconv.Itoa(int(wait/time.Second) + 1)}
		return ae
	}
	limit := s.cfg.LPR.BodyLimit
	if r.ContentLength > limit {
		return fail(http.StatusRequestEntityTooLarge, "the body is larger than "+strconv.FormatInt(limit, 10)+" bytes")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return fail(http.StatusRequestEntityTooLarge, "the body is larger than "+strconv.FormatInt(limit, 10)+" bytes")
	}
	if err != nil {
		return fail(http.StatusBadRequest, "the body could not be read")
	}
	c, err := s.cfg.DB.Camera(r.Context(), id)
	if errors.Is(err, db.ErrNotFound) {
		return errCameraAbsent
	}
	if err != nil {
		return err
	}
	if cl, err := s.cfg.DB.Client(r.Context(), c.ClientID); err != nil {
		return err
	} else if cl.Blocked {
		return errBlocked
	}
	rd, err := lpr.Parse(r.Header.Get("Content-Type"), body)
	if errors.Is(err, lpr.ErrNoPlate) {
		writeJSON(w, http.StatusOK, envelope{Code: 0, Msg: "ignored: not a plate read"})
		return nil
	}
	if err != nil {
		return fail(http.StatusUnprocessableEntity, "plate read: "+err.Error())
	}
	if rd.At.IsZero() || rd.At.After(now.Add(lprFuture)) {
		rd.At = now
	}
	ev := EventIn{ID: lprEventID(cam, rd), Camera: cam, Type: lprEventType, At: rd.At,
		Plate: rd.Plate, Confidence: rd.Confidence}
	if len(rd.Picture) > 0 {
		ev.ImageKey = storage.EventImageKey(cam, ev.ID)
		err := s.cfg.Store.Put(r.Context(), ev.ImageKey, bytes.NewReader(rd.Picture), int64(len(rd.Picture)),
			storage.PutOptions{ContentType: "image/jpeg"})
		if err != nil {
			return err
		}
	}
	if err := s.StoreEvent(r.Context(), ev); err != nil {
		return err
	}
	if s.cfg.PublishEvent != nil {
		if err := s.cfg.PublishEvent(r.Context(), ev); err != nil {
			s.log.Warn("plate read stored but not published", zap.String("camera", cam), zap.String("event", ev.ID), zap.Error(err))
		}
	}
	writeJSON(w, http.StatusOK, lprAccepted{Code: 0, Msg: "ok", ID: ev.ID})
	return nil
}

// lprAccepted is the answer to an accepted plate read.
type lprAccepted struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
	ID   string `json:"id"`
}

// lprEventID is the event id of a read: "p{Unix ms}-{FNV-64a of camera and
// plate}", so a read pushed again (a camera's retry) is stored once.
func lprEventID(cam string, rd lpr.Read) string {
	h := fnv.New64a()
	_, _ = io.WriteString(h, cam+"\x00"+rd.Plate)
	sum := strconv.FormatUint(h.Sum64(), 16)
	for len(sum) < 16 {
		sum = "0" + sum
	}
	return "p" + strconv.FormatInt(rd.At.UnixMilli(), 10) + "-" + sum
}

// lprLimiter is a token bucket per camera. Only cameras whose key
// verified get a bucket, and idle full buckets are dropped, so it holds at
// most one bucket per pushing camera.
type lprLimiter struct {
	rate  float64
	burst float64

	mu      sync.Mutex
	buckets map[string]*lprBucket
	swept   time.Time
}

type lprBucket struct {
	tokens float64
	at     time.Time
}

func newLPRLimiter(c *LPRConfig) *lprLimiter {
	if c.BodyLimit <= 0 {
		c.BodyLimit = 4 << 20
	}
	if c.Rate <= 0 {
		c.Rate = 5
	}
	if c.Burst <= 0 {
		c.Burst = 20
	}
	return &lprLimiter{rate: c.Rate, burst: float64(c.Burst), buckets: map[string]*lprBucket{}}
}

// allow takes a token of cam's bucket at now; when none is left it says
// how long until one is.
func (l *lprLimiter) allow(cam string, now time.Time) (wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	full := time.Duration(l.burst / l.rate * float64(time.Second))
	if now.Sub(l.swept) > full {
		for k, b := range l.buckets {
			if now.Sub(b.at) > full {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b := l.buckets[cam]
	if b == nil {
		b = &lprBucket{tokens: l.burst, at: now}
		l.buckets[cam] = b
	}
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(l.burst, b.tokens+el.Seconds()*l.rate)
		b.at = now
	}
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) / l.rate * float64(time.Second)), false
	}
	b.tokens--
	return 0, true
}

// eventPlates returns the plate reads of the licence plate events of evs.
func (s *Server) eventPlates(ctx context.Context, evs []db.Event) (map[string]db.Plate, error) {
	var uids []string
	for _, e := range evs {
		if e.Type == lprEventType {
			uids = append(uids, e.UID)
		}
	}
	return s.cfg.DB.Plates(ctx, uids)
}
