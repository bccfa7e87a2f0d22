package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// taskLeaseValue is the JSON of a task lease entry.
type taskLeaseValue struct {
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

// TaskLease is one named lease of a cluster-wide singleton task (the
// retention sweeper), as one holder sees it. At most one holder owns it at
// a time: it is taken when free or expired and renewed by its holder, both
// by compare-and-set on the entry's revision. Unlike a camera's lease it
// carries its own expiry, renewed by each Acquire. It is not safe for
// concurrent use.
type TaskLease struct {
	bucket Bucket
	name   string
	holder string
	ttl    time.Duration
	now    func() time.Time
}

// NewTaskLease returns lease name in bucket as seen by holder. Each Acquire
// by the owner extends it to now+ttl. now defaults to time.Now; tests
// inject a clock.
func NewTaskLease(bucket Bucket, name, holder string, ttl time.Duration, now func() time.Time) *TaskLease {
	if now == nil {
		now = time.Now
	}
	return &TaskLease{bucket: bucket, name: name, holder: holder, ttl: ttl, now: now}
}

// Acquire takes the lease when it is free or expired, or renews it when this
// holder owns it, and reports whether this holder owns it now. Losing a
// compare-and-set race is not an error: it reports false.
func (l *TaskLease) Acquire(ctx context.Context) (bool, error) {
	now := l.now()
	data, err := json.Marshal(taskLeaseValue{Holder: l.holder, Expires: now.Add(l.ttl)})
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", l.name, err)
	}
	cur, err := l.bucket.Get(ctx, l.name)
	if errors.Is(err, ErrNotFound) {
		_, err = l.bucket.Create(ctx, l.name, data)
		return l.result(err)
	}
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", l.name, err)
	}
	var v taskLeaseValue
	if json.Unmarshal(cur.Value, &v) == nil && v.Holder != l.holder && now.Before(v.Expires) {
		return false, nil
	}
	_, err = l.bucket.Update(ctx, l.name, data, cur.Rev)
	return l.result(err)
}

func (l *TaskLease) result(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrWrongRevision):
		return false, nil
	}
	return false, fmt.Errorf("lease %s: %w", l.name, err)
}

// Release gives the lease up if this holder owns it, so another holder can
// take it at once.
func (l *TaskLease) Release(ctx context.Context) error {
	cur, err := l.bucket.Get(ctx, l.name)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lease %s: %w", l.name, err)
	}
	var v taskLeaseValue
	if json.Unmarshal(cur.Value, &v) != nil || v.Holder != l.holder {
		return nil
	}
	data, _ := json.Marshal(taskLeaseValue{Holder: l.holder, Expires: time.Unix(0, 0).UTC()})
	if _, err := l.bucket.Update(ctx, l.name, data, cur.Rev); err != nil && !errors.Is(err, ErrWrongRevision) {
		return fmt.Errorf("lease %s: %w", l.name, err)
	}
	return nil
}
