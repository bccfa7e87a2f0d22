package sign

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"strings"
	"testing"
	"time"
)

var (
	secretA = []byte("secret-A-0123456789abcdef")
	secretB = []byte("secret-B-0123456789abcdef")
	t0      = time.Date(2025, 3, 10, 15, 30, 0, 0, time.UTC)
)

func mustKeys(t testing.TB, secret []byte) *Keys {
	t.Helper()
	k, err := New(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCrossPurpose signs the same fields for every purpose and verifies
// each signature for every purpose: only the pair of equal purposes
// verifies.
func TestCrossPurpose(t *testing.T) {
	k := mustKeys(t, secretA)
	exp := t0.Add(time.Hour)
	for _, signed := range Purposes() {
		sig := k.Sign(signed, exp, "7", "3")
		for _, checked := range Purposes() {
			t.Run(string(signed)+" as "+string(checked), func(t *testing.T) {
				got := k.Verify(checked, sig, exp, t0, "7", "3")
				if got != (signed == checked) {
					t.Errorf("signed for %q, verified for %q: %v", signed, checked, got)
				}
			})
		}
	}
	// Every purpose has its own key.
	seen := map[string]Purpose{}
	for _, p := range Purposes() {
		key := string(k.Key(p))
		if q, dup := seen[key]; dup {
			t.Errorf("purposes %q and %q share a key", p, q)
		}
		seen[key] = p
	}
}

func TestVerify(t *testing.T) {
	k := mustKeys(t, secretA)
	other := mustKeys(t, secretB)
	exp := t0.Add(time.Minute)
	sig := k.Sign(APIDigest, exp, "a", "bc")
	tests := []struct {
		name   string
		sig    string
		exp    time.Time
		now    time.Time
		fields []string
		want   bool
	}{
		{"valid", sig, exp, t0, []string{"a", "bc"}, true},
		{"valid until its second", sig, exp, exp.Add(999 * time.Millisecond), []string{"a", "bc"}, true},
		{"expired", sig, exp, exp.Add(time.Second), []string{"a", "bc"}, false},
		{"another expiry", sig, exp.Add(time.Hour), t0, []string{"a", "bc"}, false},
		{"fields moved across a boundary", sig, exp, t0, []string{"ab", "c"}, false},
		{"a field more", sig, exp, t0, []string{"a", "bc", ""}, false},
		{"a field less", sig, exp, t0, []string{"a"}, false},
		{"another secret", other.Sign(APIDigest, exp, "a", "bc"), exp, t0, []string{"a", "bc"}, false},
		{"upper case", strings.ToUpper(sig), exp, t0, []string{"a", "bc"}, false},
		{"truncated", sig[:SigLen-1], exp, t0, []string{"a", "bc"}, false},
		{"extended", sig + "0", exp, t0, []string{"a", "bc"}, false},
		{"empty", "", exp, t0, []string{"a", "bc"}, false},
		{"not hex", strings.Repeat("zz", SigLen/2), exp, t0, []string{"a", "bc"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := k.Verify(APIDigest, tc.sig, tc.exp, tc.now, tc.fields...); got != tc.want {
				t.Errorf("Verify = %v, want %v", got, tc.want)
			}
		})
	}
	// Without expiry: valid whatever the time.
	never := k.Sign(RTMPKey, time.Time{}, "cam")
	if !k.Verify(RTMPKey, never, time.Time{}, t0.AddDate(50, 0, 0), "cam") {
		t.Error("a signature without expiry expired")
	}
	if len(sig) != SigLen || strings.ToLower(sig) != sig {
		t.Errorf("signature %q: want %d lowercase hex digits", sig, SigLen)
	}
}

// TestRotation: during the overlap both secrets verify and the new one
// signs; after it only the new one verifies; the previous key stays
// available for opening sealed values.
func TestRotation(t *testing.T) {
	old := mustKeys(t, secretA)
	until := t0.Add(24 * time.Hour)
	rot, err := mustKeys(t, secretB).WithPrevious(secretA, until)
	if err != nil {
		t.Fatal(err)
	}
	exp := t0.Add(48 * time.Hour)
	oldSig := old.Sign(LiveURL, exp, "cam")
	newSig := rot.Sign(LiveURL, exp, "cam")
	if newSig == oldSig {
		t.Fatal("the rotated keys sign with the previous secret")
	}
	if newSig != mustKeys(t, secretB).Sign(LiveURL, exp, "cam") {
		t.Fatal("the rotated keys do not sign with the current secret")
	}
	for _, tc := range []struct {
		name string
		sig  string
		now  time.Time
		want bool
	}{
		{"old during the overlap", oldSig, until.Add(-time.Second), true},
		{"new during the overlap", newSig, until.Add(-time.Second), true},
		{"old at the end of the overlap", oldSig, until, false},
		{"new after the overlap", newSig, until.Add(time.Hour), true},
	} {
		if got := rot.Verify(LiveURL, tc.sig, exp, tc.now, "cam"); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if prev, ok := rot.Previous(CameraSeal); !ok || !bytes.Equal(prev, old.Key(CameraSeal)) {
		t.Error("Previous does not give the previous secret's key")
	}
	if _, ok := old.Previous(CameraSeal); ok {
		t.Error("keys without rotation have a previous key")
	}
	if _, err := rot.WithPrevious([]byte("short"), until); err == nil {
		t.Error("a short previous secret was accepted")
	}
}

// TestDeriveCameraSeal: the sealing key is the one sealed camera
// credentials have always used, so stored values keep opening.
func TestDeriveCameraSeal(t *testing.T) {
	want, err := hkdf.Key(sha256.New, secretA, nil, "vigia camera credentials v1", 32)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Derive(secretA, CameraSeal), want) {
		t.Fatal("the camera credentials key changed: sealed values would no longer open")
	}
}

func TestNewShortSecret(t *testing.T) {
	if _, err := New([]byte("0123456789abcde")); err == nil {
		t.Fatal("a 15-byte secret was accepted")
	}
}

func BenchmarkSign(b *testing.B) {
	k := mustKeys(b, secretA)
	exp := t0.Add(time.Hour)
	for b.Loop() {
		k.Sign(APIPlayer, exp, "7", "3", "12", "1", "2")
	}
}

func BenchmarkVerify(b *testing.B) {
	k := mustKeys(b, secretA)
	exp := t0.Add(time.Hour)
	sig := k.Sign(APIPlayer, exp, "7", "3", "12", "1", "2")
	for b.Loop() {
		k.Verify(APIPlayer, sig, exp, t0, "7", "3", "12", "1", "2")
	}
}
