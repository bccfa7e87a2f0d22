package recorder

import (
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/config"
)

func TestPlanCapacity(t *testing.T) {
	const (
		perQuota = 150_000_000 // 2 Mbit/s for 10 minutes
		perDisk  = 180_000_000 // and two segments of 60 s
	)
	tests := []struct {
		name     string
		set      func(r *config.RecordingConfig)
		cpus     int
		room     int64
		cameras  int
		bound    string
		quota    int64
		diskNeed int64
	}{
		{"cpu bound", nil, 2, 1e12, 300, "cpu", 300 * perQuota, 300 * perDisk},
		{"room unknown", nil, 2, -1, 300, "cpu", 300 * perQuota, 300 * perDisk},
		{"spool disk bound", nil, 2, 10e9, 55, "spool_disk", 55 * perQuota, 55 * perDisk},
		{"disk for no camera", nil, 2, 1e6, 0, "spool_disk", perQuota, perQuota},
		{"explicit quota", func(r *config.RecordingConfig) { r.SpoolMaxBytes = 2 << 30 }, 2, 1e12,
			14, "spool_quota", 2 << 30, 2<<30 + 14*(perDisk-perQuota)},
		{"explicit cameras", func(r *config.RecordingConfig) { r.MaxCameras = 500 }, 2, 10e9,
			500, "config", 500 * perQuota, 500 * perDisk},
		{"higher bitrate", func(r *config.RecordingConfig) { r.CameraBitrateMbps = 4 }, 2, 10e9,
			27, "spool_disk", 27 * 2 * perQuota, 27 * 2 * perDisk},
		{"shorter budget", func(r *config.RecordingConfig) { r.OutageBudget = config.Duration(time.Minute) }, 1, 1e12,
			150, "cpu", 150 * perQuota / 10, 150 * (perQuota/10 + perDisk - perQuota)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := config.Default().Recording
			if tt.set != nil {
				tt.set(&r)
			}
			c := PlanCapacity(r, tt.cpus, tt.room)
			if c.Cameras != tt.cameras || c.Bound != tt.bound || c.QuotaBytes != tt.quota || c.DiskBytes != tt.diskNeed {
				t.Errorf("got %d cameras (%s), quota %d, disk %d; want %d (%s), %d, %d\n%s",
					c.Cameras, c.Bound, c.QuotaBytes, c.DiskBytes, tt.cameras, tt.bound, tt.quota, tt.diskNeed, c.Reason)
			}
			// A derived plan never needs more disk than there is room.
			if tt.room >= 0 && c.Cameras > 0 && r.MaxCameras == 0 && r.SpoolMaxBytes == 0 && c.DiskBytes > tt.room {
				t.Errorf("needs %d bytes of spool disk, %d there", c.DiskBytes, tt.room)
			}
			if !strings.Contains(c.Reason, "bound: "+tt.bound) {
				t.Errorf("reason does not name the bound: %s", c.Reason)
			}
		})
	}
}
