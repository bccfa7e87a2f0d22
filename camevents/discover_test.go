package camevents

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/onvif/onviftest"
)

func TestProbeTargets(t *testing.T) {
	public := func(ip netip.Addr) bool { return camera.AddressAllowed(ip, false) }
	all := func(netip.Addr) bool { return true }
	for _, tt := range []struct {
		name    string
		ranges  []string
		allowed func(netip.Addr) bool
		want    []string
		err     error
		bad     bool
	}{
		{"address", []string{"203.0.113.7"}, public, []string{"203.0.113.7"}, nil, false},
		{"prefix without network and broadcast", []string{"203.0.113.0/30"}, public, []string{"203.0.113.1", "203.0.113.2"}, nil, false},
		{"/31 keeps both", []string{"203.0.113.0/31"}, public, []string{"203.0.113.0", "203.0.113.1"}, nil, false},
		{"duplicates once", []string{"203.0.113.1", "203.0.113.0/30"}, public, []string{"203.0.113.1", "203.0.113.2"}, nil, false},
		{"private skipped", []string{"192.168.1.10", "203.0.113.9"}, public, []string{"203.0.113.9"}, nil, false},
		{"only private", []string{"192.168.1.0/24", "127.0.0.1"}, public, nil, ErrForbidden, false},
		{"private allowed", []string{"192.168.1.10"}, all, []string{"192.168.1.10"}, nil, false},
		{"too many", []string{"10.0.0.0/8"}, all, nil, nil, true},
		{"4096 at most", []string{"10.0.0.0/20", "10.1.0.1", "10.1.0.2", "10.1.0.3"}, all, nil, nil, true},
		{"not an address", []string{"camera.local"}, all, nil, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ProbeTargets(tt.ranges, tt.allowed)
			switch {
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
				return
			case tt.bad:
				if err == nil {
					t.Fatalf("got %d addresses, want an error", len(got))
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			var s []string
			for _, a := range got {
				s = append(s, a.String())
			}
			if len(s) != len(tt.want) {
				t.Fatalf("got %v, want %v", s, tt.want)
			}
			for i := range s {
				if s[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", s, tt.want)
				}
			}
		})
	}
}

// TestDiscover probes a fake responder on 127.0.0.1 unicast: with private
// networks allowed the camera is found with its model and device address;
// without, nothing is probed (loopback and the multicast group are
// forbidden by the dial guard).
func TestDiscover(t *testing.T) {
	hik, _ := onviftest.VendorByName("hikvision")
	cam, err := onviftest.Start(onviftest.Options{Vendor: hik, User: "admin", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer cam.Close()
	resp, err := onviftest.ListenDiscovery("127.0.0.1:0", cam)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Close()
	port := resp.Addr().Port
	ctx := context.Background()

	got, err := Discover(ctx, DiscoverOptions{Ranges: []string{"127.0.0.1/32"}, Port: port, Wait: 2 * time.Second, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Scope("hardware") != "DS-2CD2143G2-I" || len(got[0].XAddrs) != 1 || got[0].XAddrs[0] != cam.URL ||
		got[0].From.Addr().String() != "127.0.0.1" || got[0].From.Port() != uint16(port) {
		t.Fatalf("found %+v, want the camera at %s", got, cam.URL)
	}

	for _, o := range []DiscoverOptions{
		{Ranges: []string{"127.0.0.1"}, Port: port},
		{},
	} {
		if _, err := Discover(ctx, o); !errors.Is(err, ErrForbidden) {
			t.Fatalf("ranges %v without private networks: %v, want ErrForbidden", o.Ranges, err)
		}
	}
	if n := resp.Probes(); n != 1 {
		t.Fatalf("%d probes answered, want 1", n)
	}
}

// TestDiscoverMulticast probes the WS-Discovery multicast group, where a
// fake camera's responder listens (as cameras on a LAN do).
func TestDiscoverMulticast(t *testing.T) {
	tapo, _ := onviftest.VendorByName("tapo")
	cam, err := onviftest.Start(onviftest.Options{Vendor: tapo, User: "admin", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer cam.Close()
	resp, err := onviftest.StartDiscovery(cam)
	if err != nil {
		t.Skipf("no multicast here: %v", err)
	}
	defer resp.Close()
	got, err := Discover(context.Background(), DiscoverOptions{Wait: 2 * time.Second, AllowPrivate: true})
	if err != nil {
		t.Skipf("no multicast route here: %v", err)
	}
	for _, m := range got {
		if len(m.XAddrs) > 0 && m.XAddrs[0] == cam.URL && m.Scope("hardware") == "C200" {
			return
		}
	}
	t.Fatalf("found %+v, want the camera at %s", got, cam.URL)
}
