package onviftest_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/onvif"
	"github.com/vigia/vigia/onvif/onviftest"
)

// TestOnvifUtil reads the fake camera with Debian's onvif-util (package
// onvif-tools): it finds the camera by WS-Discovery, then reads its device
// information, profiles and stream address. onvif-util has no events
// command. Its discovery socket turns multicast loopback off, so it runs
// with a preloaded shim (testdata/preload) that keeps loopback on, so that
// it hears a camera on the same host.
func TestOnvifUtil(t *testing.T) {
	util, shim := onvifUtil(t)
	// Every vendor but Dahua, whose fake takes HTTP digest only, which
	// onvif-util 1.4.4 does not speak.
	for _, name := range []string{"hikvision", "axis", "bosch", "hanwha", "tapo", "reolink"} {
		t.Run(name, func(t *testing.T) {
			v, _ := onviftest.VendorByName(name)
			// A loopback address of its own: onvif-util takes the first
			// device discovered at the address it is given, and fake
			// cameras of other tests (other packages' too, run at the same
			// time) answer the same multicast probe, with other passwords.
			host := fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
			cam, err := onviftest.Start(onviftest.Options{Vendor: v, User: "admin", Password: "Secret1", ClockOffset: 0,
				Addr: net.JoinHostPort(host, "0")})
			if err != nil {
				t.Fatal(err)
			}
			defer cam.Close()
			disc, err := onviftest.StartDiscovery(cam)
			if err != nil {
				t.Fatalf("ws-discovery responder: %v", err)
			}
			defer disc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, util, "-u", "admin", "-p", "Secret1", host)
			cmd.Env = append(os.Environ(), "LD_PRELOAD="+shim)
			cmd.Stdin = strings.NewReader("get profiles\nget rtsp\nquit\n")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err = cmd.Run()
			s := out.String()
			if err != nil {
				t.Fatalf("onvif-util: %v\n%s", err, s)
			}
			for _, want := range []string{"successfully connected to host", "Token 0: ", "Token 1: ", "rtsp://" + host} {
				if !strings.Contains(s, want) {
					t.Errorf("onvif-util output lacks %q:\n%s", want, s)
				}
			}
			if cam.Calls("GetDeviceInformation") == 0 || cam.Calls("GetStreamUri") == 0 {
				t.Errorf("camera answered GetDeviceInformation %d times, GetStreamUri %d times", cam.Calls("GetDeviceInformation"), cam.Calls("GetStreamUri"))
			}
		})
	}
}

// onvifUtil returns the path of onvif-util and of the multicast loopback
// shim it runs with.
func onvifUtil(t *testing.T) (util, shim string) {
	t.Helper()
	util, err := exec.LookPath("onvif-util")
	need(t, err == nil, "onvif-util (Debian package onvif-tools)")
	cc, err := exec.LookPath("cc")
	need(t, err == nil, "a C compiler (for the multicast loopback shim)")
	shim = filepath.Join(t.TempDir(), "multicast_loop.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", shim, filepath.Join("testdata", "preload", "multicast_loop.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("shim: %v: %s", err, out)
	}
	return util, shim
}

// TestDiscoveryAgreesWithOnvifUtil: onvif-util's network scan (-a) and
// Vigia's WS-Discovery client (onvif.Probe) read the same camera, name and
// model from the fake responder's ProbeMatches.
func TestDiscoveryAgreesWithOnvifUtil(t *testing.T) {
	util, shim := onvifUtil(t)
	for _, name := range []string{"bosch", "hanwha"} {
		t.Run(name, func(t *testing.T) {
			v, _ := onviftest.VendorByName(name)
			cam, err := onviftest.Start(onviftest.Options{Vendor: v, User: "admin", Password: "Secret1"})
			if err != nil {
				t.Fatal(err)
			}
			defer cam.Close()
			disc, err := onviftest.StartDiscovery(cam)
			if err != nil {
				t.Fatalf("ws-discovery responder: %v", err)
			}
			defer disc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, util, "-a")
			cmd.Env = append(os.Environ(), "LD_PRELOAD="+shim)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("onvif-util -a: %v\n%s", err, out)
			}

			conn, err := net.ListenUDP("udp4", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			defer pcancel()
			ms, err := onvif.Probe(pctx, conn, []netip.AddrPort{onvif.DiscoveryGroup}, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			var ours string
			for _, m := range ms {
				if len(m.XAddrs) > 0 && m.XAddrs[0] == cam.URL {
					ours = m.Host() + " (" + m.Scope("name") + " " + m.Scope("hardware") + ")"
				}
			}
			if ours == "" || !strings.Contains(string(out), ours) {
				t.Fatalf("Vigia read %q; onvif-util -a printed:\n%s", ours, out)
			}
		})
	}
}
