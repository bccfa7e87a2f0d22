package cluster

import (
	"context"
	"testing"
	"time"
)

// One holder at a time owns a task lease; it lapses at its expiry and is
// taken at once once released.
func TestTaskLease(t *testing.T) {
	ctx := context.Background()
	b := newMemBucket()
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	a := NewTaskLease(b, "sweep", "a", time.Minute, clock)
	c := NewTaskLease(b, "sweep", "c", time.Minute, clock)
	for _, step := range []struct {
		name string
		l    *TaskLease
		want bool
		then func()
	}{
		{"a takes the free lease", a, true, nil},
		{"c finds it held", c, false, nil},
		{"a renews it", a, true, func() { now = now.Add(time.Minute + time.Second) }},
		{"c takes it once it expired", c, true, nil},
		{"a finds it held", a, false, func() {
			if err := c.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"a takes it once released", a, true, nil},
	} {
		got, err := step.l.Acquire(ctx)
		if err != nil || got != step.want {
			t.Fatalf("%s: %v, %v; want %v", step.name, got, err, step.want)
		}
		if step.then != nil {
			step.then()
		}
	}
}
