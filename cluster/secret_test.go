package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/vigia/vigia/bus"
)

// TestSecretRotation: nodes rotating their secret with
// security.previous_secret, one at a time, are all accepted; once a node
// ends its rotation, a node still on the old secret alone is refused.
func TestSecretRotation(t *testing.T) {
	old, cur, other := []byte(strings.Repeat("o", 32)), []byte(strings.Repeat("n", 32)), []byte(strings.Repeat("x", 32))
	facts := newMemBucket()
	ctx := context.Background()
	steps := []struct {
		name           string
		secret, prev   []byte
		wantErr        bool
		current, after string // fingerprints in the record afterwards
	}{
		{"first node, old secret", old, nil, false, SecretFingerprint(old), ""},
		{"second node, old secret", old, nil, false, SecretFingerprint(old), ""},
		{"other secret", other, nil, true, SecretFingerprint(old), ""},
		{"first rotated node", cur, old, false, SecretFingerprint(cur), SecretFingerprint(old)},
		{"node not yet rotated restarts", old, nil, false, SecretFingerprint(cur), SecretFingerprint(old)},
		{"second rotated node", cur, old, false, SecretFingerprint(cur), SecretFingerprint(old)},
		{"node ends the rotation", cur, nil, false, SecretFingerprint(cur), ""},
		{"node on the old secret after the rotation", old, nil, true, SecretFingerprint(cur), ""},
	}
	for _, s := range steps {
		err := CheckSecret(ctx, facts, "n", s.secret, s.prev)
		if (err != nil) != s.wantErr || (err != nil && !errors.Is(err, ErrSecretMismatch)) {
			t.Fatalf("%s: err %v, want error %v", s.name, err, s.wantErr)
		}
		e, err := facts.Get(ctx, bus.KeySecretFingerprint)
		if err != nil {
			t.Fatal(err)
		}
		var rec bus.SecretFingerprint
		if err := json.Unmarshal(e.Value, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Current != s.current || rec.Previous != s.after {
			t.Fatalf("%s: record %+v, want current %s previous %q", s.name, rec, s.current, s.after)
		}
	}
}

// TestSecretFingerprint: the fingerprint tells secrets apart and is
// the same for one secret.
func TestSecretFingerprint(t *testing.T) {
	a, b := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))
	fa := SecretFingerprint(a)
	if len(fa) != 32 || fa == SecretFingerprint(b) || fa != SecretFingerprint(a) {
		t.Fatalf("fingerprints %s and %s", fa, SecretFingerprint(b))
	}
}
