package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/storage"
)

// Jobs submits, reads and removes export jobs: the side the API uses.
type Jobs struct {
	bus      *bus.Bus
	store    storage.Store
	maxRange time.Duration
	now      func() time.Time
}

// NewJobs returns the job client. maxRange defaults to DefaultMaxRange.
func NewJobs(b *bus.Bus, st storage.Store, maxRange time.Duration) *Jobs {
	if maxRange <= 0 {
		maxRange = DefaultMaxRange
	}
	return &Jobs{bus: b, store: st, maxRange: maxRange, now: time.Now}
}

// Submit records the job with status 0 and queues it. A range longer than
// the maximum, empty or reversed wraps ErrRange; an id already used wraps
// ErrJobExists.
func (j *Jobs) Submit(ctx context.Context, job Job) (State, error) {
	if job.ID < 0 {
		return State{}, fmt.Errorf("%w: negative id", ErrInvalidJob)
	}
	if err := job.Request().Validate(j.maxRange); err != nil {
		return State{}, err
	}
	now := j.now().UTC()
	st := State{Job: job, Status: StatusMaking, Key: VideoKey(job.ID), Created: now, Updated: now}
	data, err := json.Marshal(st)
	if err != nil {
		return State{}, fmt.Errorf("submit job %d: %w", job.ID, err)
	}
	if _, err := j.bus.KVCreate(ctx, bus.BucketExports, stateKey(job.ID), data); err != nil {
		if errors.Is(err, bus.ErrRevision) {
			return State{}, fmt.Errorf("%w: %d", ErrJobExists, job.ID)
		}
		return State{}, fmt.Errorf("submit job %d: %w", job.ID, err)
	}
	msg, err := json.Marshal(job)
	if err != nil {
		return State{}, fmt.Errorf("submit job %d: %w", job.ID, err)
	}
	if err := j.bus.PublishExportJob(ctx, "export-"+stateKey(job.ID), msg); err != nil {
		_ = j.bus.KVDelete(ctx, bus.BucketExports, stateKey(job.ID))
		return State{}, fmt.Errorf("submit job %d: %w", job.ID, err)
	}
	return st, nil
}

// Get returns the state of job id; a missing job wraps ErrJobNotFound.
func (j *Jobs) Get(ctx context.Context, id int64) (State, error) {
	st, _, err := getState(ctx, j.bus, id)
	return st, err
}

// List returns the state of every job, by id.
func (j *Jobs) List(ctx context.Context) ([]State, error) {
	keys, err := j.bus.KVKeys(ctx, bus.BucketExports)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	var out []State
	for _, k := range keys {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			continue
		}
		st, err := j.Get(ctx, id)
		if errors.Is(err, ErrJobNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out, nil
}

// Remove deletes the job's record, then its video, thumbnail and manifest. A job
// still running notices at its next state update, stops, and deletes what
// it stored.
func (j *Jobs) Remove(ctx context.Context, id int64) error {
	if err := j.bus.KVDelete(ctx, bus.BucketExports, stateKey(id)); err != nil {
		return fmt.Errorf("remove job %d: %w", id, err)
	}
	if err := j.store.Delete(ctx, []string{VideoKey(id), ThumbKey(id), ManifestKey(id), SignatureKey(id)}); err != nil {
		return fmt.Errorf("remove job %d: %w", id, err)
	}
	return nil
}

// URLs returns signed URLs of a done job's video and thumbnail (empty
// without one), valid for expiry. URLs are signed when asked, never stored,
// because they expire.
func (j *Jobs) URLs(ctx context.Context, id int64, expiry time.Duration) (video, thumb string, err error) {
	st, err := j.Get(ctx, id)
	if err != nil {
		return "", "", err
	}
	if st.Status != StatusDone {
		return "", "", fmt.Errorf("job %d has status %d, not done", id, st.Status)
	}
	if video, err = j.store.SignedURL(ctx, st.Key, expiry); err != nil {
		return "", "", err
	}
	if st.ThumbKey != "" {
		if thumb, err = j.store.SignedURL(ctx, st.ThumbKey, expiry); err != nil {
			return "", "", err
		}
	}
	return video, thumb, nil
}

// Expire removes the finished jobs (done or failed) last updated more than
// maxAge before now, with their files. It returns how many it removed.
func (j *Jobs) Expire(ctx context.Context, maxAge time.Duration, now time.Time) (int, error) {
	if maxAge <= 0 {
		return 0, nil
	}
	states, err := j.List(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, st := range states {
		if st.Status == StatusMaking || now.Sub(st.Updated) <= maxAge {
			continue
		}
		if err := j.Remove(ctx, st.ID); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// getState reads job id's state and revision.
func getState(ctx context.Context, b *bus.Bus, id int64) (State, uint64, error) {
	data, rev, err := b.KVGet(ctx, bus.BucketExports, stateKey(id))
	if errors.Is(err, bus.ErrKeyNotFound) {
		return State{}, 0, fmt.Errorf("%w: %d", ErrJobNotFound, id)
	}
	if err != nil {
		return State{}, 0, fmt.Errorf("job %d: %w", id, err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return State{}, 0, fmt.Errorf("%w: state of %d: %w", ErrInvalidJob, id, err)
	}
	return st, rev, nil
}
