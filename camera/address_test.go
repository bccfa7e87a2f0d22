package camera

import (
	"net/netip"
	"testing"
	"time"

	"github.com/vigia/vigia/sign"
)

func TestAddressAllowed(t *testing.T) {
	tests := []struct {
		name string
		ip   string
		want bool
	}{
		{"public IPv4", "8.8.8.8", true},
		{"public IPv6", "2001:4860:4860::8888", true},
		{"just past carrier-grade NAT", "100.128.0.1", true},
		{"just past benchmarking", "198.20.0.1", true},
		{"loopback", "127.0.0.1", false},
		{"loopback IPv6", "::1", false},
		{"private 10/8", "10.1.2.3", false},
		{"private 172.16/12", "172.16.0.1", false},
		{"private 192.168/16", "192.168.1.10", false},
		{"unique local IPv6", "fd00::1", false},
		{"link-local", "169.254.169.254", false},
		{"link-local IPv6", "fe80::1", false},
		{"carrier-grade NAT", "100.64.0.1", false},
		{"this network", "0.1.2.3", false},
		{"unspecified", "0.0.0.0", false},
		{"unspecified IPv6", "::", false},
		{"IETF protocol assignments", "192.0.0.8", false},
		{"benchmarking", "198.19.255.1", false},
		{"site-local IPv6", "fec0::1", false},
		{"multicast", "224.0.0.1", false},
		{"multicast IPv6", "ff02::1", false},
		{"interface-local multicast", "ff01::1", false},
		{"private mapped into IPv6", "::ffff:10.0.0.1", false},
		{"loopback mapped into IPv6", "::ffff:127.0.0.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ip := netip.MustParseAddr(tt.ip)
			if got := AddressAllowed(ip, false); got != tt.want {
				t.Errorf("AddressAllowed(%s, false) = %v, want %v", ip, got, tt.want)
			}
			if !AddressAllowed(ip, true) {
				t.Errorf("AddressAllowed(%s, true) = false: private networks allowed admit every address", ip)
			}
		})
	}
}

// TestPushKey: a stream key is the camera id signed for purpose
// sign.RTMPKey without expiry, under the current secret; another camera's
// key, a signature for another purpose and a key of another secret are
// refused; during a rotation's overlap the previous secret's key is
// accepted, after it not.
func TestPushKey(t *testing.T) {
	oldSecret := []byte("the old secret 0123456789abcdef")
	newSecret := []byte("the new secret 0123456789abcdef")
	old, err := sign.New(oldSecret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	key := PushKey(old, "cam1")
	if key != old.Sign(sign.RTMPKey, time.Time{}, "cam1") || len(key) != sign.SigLen {
		t.Fatalf("stream key %q is not the documented signature", key)
	}
	if !CheckPushKey(old, "cam1", key, now) {
		t.Fatal("the camera's key refused")
	}
	if CheckPushKey(old, "cam2", key, now) || CheckPushKey(old, "cam1", PushKey(old, "cam2"), now) || CheckPushKey(old, "cam1", "", now) {
		t.Error("another camera's key, or none, accepted")
	}
	for _, p := range sign.Purposes() {
		if p != sign.RTMPKey && CheckPushKey(old, "cam1", old.Sign(p, time.Time{}, "cam1"), now) {
			t.Errorf("a key signed for %q accepted", p)
		}
	}
	fresh, err := sign.New(newSecret)
	if err != nil {
		t.Fatal(err)
	}
	if CheckPushKey(fresh, "cam1", key, now) {
		t.Error("a key of another secret accepted")
	}
	rotated, err := fresh.WithPrevious(oldSecret, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !CheckPushKey(rotated, "cam1", key, now) || CheckPushKey(rotated, "cam1", key, now.Add(time.Hour)) {
		t.Error("the previous secret's key: want accepted during the overlap only")
	}
	if PushKey(rotated, "cam1") != PushKey(fresh, "cam1") {
		t.Error("keys are not made under the current secret")
	}
}

// TestPushKeyGen: each generation of a camera's stream key verifies only
// for itself; generation 0 is PushKey's.
func TestPushKeyGen(t *testing.T) {
	k, err := sign.New([]byte("a secret for key generations 0123"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if PushKeyGen(k, "cam1", 0) != PushKey(k, "cam1") {
		t.Fatal("generation 0 is not PushKey's")
	}
	for g := 0; g < 3; g++ {
		key := PushKeyGen(k, "cam1", g)
		for h := 0; h < 3; h++ {
			if CheckPushKeyGen(k, "cam1", key, h, now) != (g == h) {
				t.Errorf("key of generation %d checked against %d: %v", g, h, g != h)
			}
		}
		if CheckPushKeyGen(k, "cam2", key, g, now) {
			t.Errorf("generation %d: another camera's key accepted", g)
		}
	}
}
