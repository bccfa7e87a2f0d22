package connlimit

import "sync"

// PerAddress counts connections by Key and refuses more than a maximum
// from one source. It is safe for concurrent use.
type PerAddress struct {
	max int

	mu sync.Mutex
	n  map[string]int
}

// NewPerAddress returns a counter allowing max connections per source; 0
// or less allows any number.
func NewPerAddress(max int) *PerAddress {
	return &PerAddress{max: max, n: map[string]int{}}
}

// Acquire counts one more connection from key, or reports false (and
// counts nothing) when key has max already.
func (p *PerAddress) Acquire(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.max > 0 && p.n[key] >= p.max {
		return false
	}
	p.n[key]++
	return true
}

// Release forgets one connection from key, counted by Acquire.
func (p *PerAddress) Release(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[key] <= 1 {
		delete(p.n, key)
		return
	}
	p.n[key]--
}

// Count returns the connections counted from key.
func (p *PerAddress) Count(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[key]
}
