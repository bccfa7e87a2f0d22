package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// BucketLeases holds named leases of cluster-wide singleton tasks (the
// retention sweeper), key = lease name. Each value carries its holder and
// expiry; taking and renewing are compare-and-set on the entry's revision.
const BucketLeases = "leases"

// leaseValue is the JSON of a lease entry.
type leaseValue struct {
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

// Lease is one named lease in BucketLeases, seen by one holder. At most one
// holder owns it at a time: it is taken when free or expired and renewed by
// its holder, both with compare-and-set. It is not safe for concurrent use.
type Lease struct {
	b      *Bus
	name   string
	holder string
	ttl    time.Duration
	now    func() time.Time
}

// NewLease returns the lease name as seen by holder. Each Acquire by the
// owner extends it to now+ttl. now defaults to time.Now; tests inject a clock.
func (b *Bus) NewLease(name, holder string, ttl time.Duration, now func() time.Time) *Lease {
	if now == nil {
		now = time.Now
	}
	return &Lease{b: b, name: name, holder: holder, ttl: ttl, now: now}
}

// Acquire takes the lease when it is free or expired, or renews it when this
// holder owns it, and reports whether this holder owns it now. Losing a
// compare-and-set race is not an error: it reports false.
func (l *Lease) Acquire(ctx context.Context) (bool, error) {
	now := l.now()
	data, err := json.Marshal(leaseValue{Holder: l.holder, Expires: now.Add(l.ttl)})
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", l.name, err)
	}
	cur, rev, err := l.b.KVGet(ctx, BucketLeases, l.name)
	if errors.Is(err, ErrKeyNotFound) {
		_, err = l.b.KVCreate(ctx, BucketLeases, l.name, data)
		return l.result(err)
	}
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", l.name, err)
	}
	var v leaseValue
	if json.Unmarshal(cur, &v) == nil && v.Holder != l.holder && now.Before(v.Expires) {
		return false, nil
	}
	_, err = l.b.KVUpdate(ctx, BucketLeases, l.name, data, rev)
	return l.result(err)
}

func (l *Lease) result(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrRevision):
		return false, nil
	}
	return false, fmt.Errorf("lease %s: %w", l.name, err)
}

// Release gives the lease up if this holder owns it, so another holder can
// take it at once.
func (l *Lease) Release(ctx context.Context) error {
	cur, rev, err := l.b.KVGet(ctx, BucketLeases, l.name)
	if errors.Is(err, ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lease %s: %w", l.name, err)
	}
	var v leaseValue
	if json.Unmarshal(cur, &v) != nil || v.Holder != l.holder {
		return nil
	}
	data, _ := json.Marshal(leaseValue{Holder: l.holder, Expires: time.Unix(0, 0).UTC()})
	if _, err := l.b.KVUpdate(ctx, BucketLeases, l.name, data, rev); err != nil && !errors.Is(err, ErrRevision) {
		return fmt.Errorf("lease %s: %w", l.name, err)
	}
	return nil
}
