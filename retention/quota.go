package retention

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// DefaultQuotaWarning is the share of a quota at which
// vigia_storage_quota_warning turns 1.
const DefaultQuotaWarning = 0.9

// camUsage is what one camera stores under rec/.
type camUsage struct {
	cam   CameraRetention
	bytes int64
	segs  []quotaSeg // oldest first
}

type quotaSeg struct {
	key            string
	startMs, endMs int64
	size           int64
}

// usage lists c's recording objects: their total size and the segments,
// oldest first.
func (s *Sweeper) usage(ctx context.Context, c CameraRetention) (*camUsage, error) {
	u := &camUsage{cam: c}
	prefix := storage.CameraSegmentsPrefix(c.Camera)
	for o, err := range storage.Walk(ctx, s.cfg.Store, prefix) {
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, err)
		}
		u.bytes += o.Size
		e, err := storage.ParseRecordingKey(o.Key)
		if err != nil || e.Kind != storage.KindSegment || e.Camera != c.Camera {
			continue
		}
		u.segs = append(u.segs, quotaSeg{key: o.Key, startMs: e.StartMs, endMs: e.StartMs + e.DurMs, size: o.Size})
	}
	slices.SortStableFunc(u.segs, func(a, b quotaSeg) int { return cmp.Compare(a.startMs, b.startMs) })
	return u, nil
}

// enforceQuotas measures the recordings of every camera under a quota, deletes the oldest
// segments of a camera over its QuotaBytes, then of a client over its
// ClientQuotaBytes (oldest first across the client's cameras), writes a
// retention_quota gap record for each hour folder it deleted from, and
// publishes the metrics.
func (s *Sweeper) enforceQuotas(ctx context.Context, cams []CameraRetention, r *Report) error {
	var us []*camUsage
	var errs []error
	for _, c := range cams {
		if !storage.ValidCameraID(c.Camera) || c.QuotaBytes <= 0 && (c.Client == "" || c.ClientQuotaBytes <= 0) {
			// Measuring lists every recording object of the camera:
			// only cameras under a quota pay for it.
			continue
		}
		u, err := s.usage(ctx, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("camera %s: %w", c.Camera, err))
			continue
		}
		us = append(us, u)
	}
	for _, u := range us {
		if q := u.cam.QuotaBytes; q > 0 && u.bytes > q {
			if err := s.trim(ctx, []*camUsage{u}, q, r); err != nil {
				errs = append(errs, fmt.Errorf("camera %s quota: %w", u.cam.Camera, err))
			}
		}
	}
	clients := map[string][]*camUsage{}
	clientQuota := map[string]int64{}
	for _, u := range us {
		if u.cam.Client != "" {
			clients[u.cam.Client] = append(clients[u.cam.Client], u)
			clientQuota[u.cam.Client] = max(clientQuota[u.cam.Client], u.cam.ClientQuotaBytes)
		}
	}
	for client, group := range clients {
		var total int64
		for _, u := range group {
			total += u.bytes
		}
		if q := clientQuota[client]; q > 0 && total > q {
			if err := s.trim(ctx, group, q, r); err != nil {
				errs = append(errs, fmt.Errorf("client %s quota: %w", client, err))
			}
		}
	}
	s.publishUsage(us, clients, clientQuota)
	return errors.Join(errs...)
}

// trim deletes the oldest segments of group, across its cameras, until
// their recordings take at most quota bytes.
func (s *Sweeper) trim(ctx context.Context, group []*camUsage, quota int64, r *Report) error {
	var total int64
	for _, u := range group {
		total += u.bytes
	}
	type hourKey struct {
		u    *camUsage
		hour int64
	}
	spans := map[hourKey][2]int64{}
	var order []hourKey
	d := &deleter{s: s.cfg.Store, r: r}
	for total > quota {
		var oldest *camUsage
		for _, u := range group {
			if len(u.segs) > 0 && (oldest == nil || u.segs[0].startMs < oldest.segs[0].startMs) {
				oldest = u
			}
		}
		if oldest == nil {
			break
		}
		sg := oldest.segs[0]
		oldest.segs = oldest.segs[1:]
		if s.held(sg.key) {
			r.Held++
			continue
		}
		if err := d.add(ctx, sg.key); err != nil {
			return err
		}
		total -= sg.size
		oldest.bytes -= sg.size
		r.QuotaSegments++
		r.QuotaBytes += sg.size
		s.m.deleted.WithLabelValues(oldest.cam.Client, oldest.cam.Camera).Add(float64(sg.size))
		hk := hourKey{oldest, time.UnixMilli(sg.startMs).UTC().Truncate(time.Hour).UnixMilli()}
		sp, seen := spans[hk]
		if !seen {
			order = append(order, hk)
			sp = [2]int64{sg.startMs, sg.endMs}
		}
		sp[1] = max(sp[1], sg.endMs)
		spans[hk] = sp
	}
	if err := d.flush(ctx); err != nil {
		return err
	}
	for _, hk := range order {
		sp := spans[hk]
		if err := s.writeQuotaGap(ctx, hk.u.cam.Camera, sp[0], sp[1]); err != nil {
			return err
		}
	}
	return nil
}

// writeQuotaGap writes the retention_quota gap record of [startMs, endMs).
func (s *Sweeper) writeQuotaGap(ctx context.Context, camera string, startMs, endMs int64) error {
	g := status.Gap{Camera: camera, StartMs: startMs, EndMs: endMs, Cause: status.CauseRetentionQuota, Node: s.cfg.Node}
	key := storage.GapKey(camera, time.UnixMilli(startMs), time.Duration(endMs-startMs)*time.Millisecond, string(g.Cause))
	body, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if err := s.cfg.Store.Put(ctx, key, bytes.NewReader(body), int64(len(body)), storage.PutOptions{
		ContentType: "application/json", Metadata: map[string]string{"camera": camera}}); err != nil {
		return fmt.Errorf("gap record %s: %w", key, err)
	}
	s.cfg.Log.Info("segments deleted for a storage quota", zap.String("camera", camera),
		zap.Int64("from_ms", startMs), zap.Int64("to_ms", endMs))
	return nil
}

// quotaMetrics are the storage usage metrics; the sweepers of one process
// share them.
type quotaMetrics struct {
	bytes   *prometheus.GaugeVec
	quota   *prometheus.GaugeVec
	warning *prometheus.GaugeVec
	deleted *prometheus.CounterVec
}

func newQuotaMetrics(reg prometheus.Registerer) *quotaMetrics {
	labels := []string{"client", "camera"}
	m := &quotaMetrics{
		bytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vigia_storage_bytes",
			Help: "Bytes of a camera's recordings in storage (rec/ objects), measured by the last retention sweep."}, labels),
		quota: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vigia_storage_quota_bytes",
			Help: "Storage quota of a camera's recordings; camera=\"\" is its client's quota over all its cameras."}, labels),
		warning: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vigia_storage_quota_warning",
			Help: "1 when a camera's (or, camera=\"\", a client's) recordings take 90% of its quota or more: the sweeper deletes the oldest past 100%."}, labels),
		deleted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vigia_storage_quota_deleted_bytes_total",
			Help: "Bytes of segments the retention sweeper deleted for storage quotas."}, labels),
	}
	if reg == nil {
		return m
	}
	m.bytes = register(reg, m.bytes)
	m.quota = register(reg, m.quota)
	m.warning = register(reg, m.warning)
	m.deleted = register(reg, m.deleted)
	return m
}

// register registers c, or returns the collector already registered under
// its name (the other sweeper of the process).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if ex, ok := are.ExistingCollector.(C); ok {
				return ex
			}
		}
	}
	return c
}

// publishUsage sets the metrics of this sweep and removes the series of
// cameras this sweeper no longer lists.
func (s *Sweeper) publishUsage(us []*camUsage, clients map[string][]*camUsage, clientQuota map[string]int64) {
	seen := map[[2]string]bool{}
	warn := func(bytes, quota int64) float64 {
		if quota > 0 && float64(bytes) >= s.cfg.QuotaWarning*float64(quota) {
			return 1
		}
		return 0
	}
	for _, u := range us {
		l := [2]string{u.cam.Client, u.cam.Camera}
		seen[l] = true
		s.m.bytes.WithLabelValues(l[0], l[1]).Set(float64(u.bytes))
		s.m.quota.WithLabelValues(l[0], l[1]).Set(float64(max(u.cam.QuotaBytes, 0)))
		if w := warn(u.bytes, u.cam.QuotaBytes); w > 0 || u.cam.QuotaBytes > 0 {
			s.m.warning.WithLabelValues(l[0], l[1]).Set(w)
		}
	}
	for client, group := range clients {
		var total int64
		for _, u := range group {
			total += u.bytes
		}
		l := [2]string{client, ""}
		seen[l] = true
		s.m.quota.WithLabelValues(client, "").Set(float64(clientQuota[client]))
		s.m.warning.WithLabelValues(client, "").Set(warn(total, clientQuota[client]))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.published {
		if !seen[l] {
			s.m.bytes.DeleteLabelValues(l[0], l[1])
			s.m.quota.DeleteLabelValues(l[0], l[1])
			s.m.warning.DeleteLabelValues(l[0], l[1])
		}
	}
	s.published = seen
}

// WithQuotas returns cams with the configured quotas (retention.camera_quota,
// retention.client_quota) given to every camera that carries none of its
// own; 0 leaves that quota off.
func WithQuotas(cams func(context.Context) ([]CameraRetention, error), cameraQuota, clientQuota int64) func(context.Context) ([]CameraRetention, error) {
	return func(ctx context.Context) ([]CameraRetention, error) {
		out, err := cams(ctx)
		for i := range out {
			if out[i].QuotaBytes == 0 {
				out[i].QuotaBytes = cameraQuota
			}
			if out[i].ClientQuotaBytes == 0 {
				out[i].ClientQuotaBytes = clientQuota
			}
		}
		return out, err
	}
}
