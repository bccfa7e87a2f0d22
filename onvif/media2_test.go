package onvif_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/onvif"
	"github.com/vigia/vigia/onvif/onviftest"
)

// TestMedia2: a camera that advertises Media2 and no Media service gets
// its profiles, stream and snapshot addresses from Media2 (the fake
// refuses Media requests in that mode); a camera with both keeps Media.
func TestMedia2(t *testing.T) {
	for _, name := range []string{"hikvision", "axis", "dahua", "reolink"} {
		t.Run(name, func(t *testing.T) {
			v, _ := onviftest.VendorByName(name)
			cam, err := onviftest.Start(onviftest.Options{Vendor: v, User: "admin", Password: "pw", ClockOffset: time.Hour, Media2Only: true})
			if err != nil {
				t.Fatal(err)
			}
			defer cam.Close()
			ctx := context.Background()
			c := onvif.NewClient(cam.URL, "admin", "pw")
			if err := c.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			s, err := c.Discover(ctx)
			if err != nil || s.Media2 != cam.Base+"/onvif/Media2" {
				t.Fatalf("services %+v, %v", s, err)
			}
			ps, err := c.GetProfiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 2 || ps[0].Token != "profile_1_h265" || ps[0].Encoding != "H265" || ps[0].Width != 3840 || ps[0].Height != 2160 ||
				ps[1].Token != "profile_2_h264" || ps[1].Encoding != "H264" {
				t.Fatalf("profiles %+v", ps)
			}
			uri, err := c.GetStreamUri(ctx, ps[1].Token)
			if err != nil || !strings.HasPrefix(uri, "rtsp://") || !strings.Contains(uri, "profile=profile_2_h264") {
				t.Fatalf("stream address %q, %v", uri, err)
			}
			snap, err := c.GetSnapshotUri(ctx, ps[0].Token)
			if err != nil || !strings.HasSuffix(snap, "profile=profile_1_h265") {
				t.Fatalf("snapshot address %q, %v", snap, err)
			}
		})
	}
}
