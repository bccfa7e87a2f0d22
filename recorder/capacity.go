package recorder

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/config"
)

// CamerasPerCPU is the cameras one CPU of a recorder node records: the
// planning figure of docs/operations.md (0.5 % of a core per camera with
// thumbnails and motion on, at 75 % use), measured with vigia bench and
// make cluster (docs/benchmarks.md).
const CamerasPerCPU = 150

// Capacity is how many cameras a recorder node holds, and why.
type Capacity struct {
	// Cameras is the most cameras the node records.
	Cameras int

	// Bound names what sets Cameras: "config" (recording.max_cameras),
	// "cpu", "spool_disk" or "spool_quota" (an explicit
	// recording.spool_max_bytes).
	Bound string

	// CPU, SpoolDisk and SpoolQuota are the cameras each resource holds:
	// the CPUs, the spool disk's room (-1: unknown) and an explicit quota
	// (-1: none, the quota is derived from Cameras).
	CPU, SpoolDisk, SpoolQuota int

	// QuotaBytes is the spool's backlog quota: recording.spool_max_bytes,
	// or Cameras × bitrate × outage budget (one camera's at least).
	QuotaBytes int64

	// DiskBytes is the spool disk the node needs at Cameras: the quota
	// plus each camera's open segment and newest finished one.
	DiskBytes int64

	// Reason says how the figures were reached, in one line.
	Reason string

	outageBudget time.Duration // recording.outage_budget
}

// PlanCapacity works out a recorder node's capacity from its recording
// configuration, its CPUs and the room of its spool disk in bytes (-1:
// unknown; segmenter.SpoolRoom). Per camera, at recording.camera_bitrate_mbps,
// the outage budget is bitrate × recording.outage_budget of backlog, and the
// spool disk holds that plus two segments (the one being written and the
// newest finished one, which the quota does not count).
func PlanCapacity(r config.RecordingConfig, cpus int, spoolRoom int64) Capacity {
	rate := r.CameraBitrateMbps * 1e6 / 8 // bytes per second
	budget := time.Duration(r.OutageBudget).Seconds()
	segment := time.Duration(r.SegmentDuration).Seconds()
	perQuota := int64(rate * budget)
	perDisk := int64(rate * (budget + 2*segment))
	if perQuota < 1 {
		perQuota = 1
	}
	if perDisk < 1 {
		perDisk = 1
	}

	c := Capacity{CPU: max(cpus, 1) * CamerasPerCPU, SpoolDisk: -1, SpoolQuota: -1, outageBudget: time.Duration(r.OutageBudget)}
	c.Cameras, c.Bound = c.CPU, "cpu"
	if spoolRoom >= 0 {
		c.SpoolDisk = int(spoolRoom / perDisk)
		if c.SpoolDisk < c.Cameras {
			c.Cameras, c.Bound = c.SpoolDisk, "spool_disk"
		}
	}
	if r.SpoolMaxBytes > 0 {
		c.SpoolQuota = int(int64(r.SpoolMaxBytes) / perQuota)
		if c.SpoolQuota < c.Cameras {
			c.Cameras, c.Bound = c.SpoolQuota, "spool_quota"
		}
	}
	if r.MaxCameras > 0 {
		c.Cameras, c.Bound = r.MaxCameras, "config"
	}

	c.QuotaBytes = int64(r.SpoolMaxBytes)
	if c.QuotaBytes <= 0 {
		c.QuotaBytes = int64(max(c.Cameras, 1)) * perQuota
	}
	c.DiskBytes = c.QuotaBytes + int64(c.Cameras)*(perDisk-perQuota)

	disk := "unknown"
	if c.SpoolDisk >= 0 {
		disk = fmt.Sprintf("%d (%s of room, %s per camera)", c.SpoolDisk, gb(spoolRoom), gb(perDisk))
	}
	quota := "derived"
	if c.SpoolQuota >= 0 {
		quota = fmt.Sprintf("%d (recording.spool_max_bytes %s, %s per camera)", c.SpoolQuota, gb(int64(r.SpoolMaxBytes)), gb(perQuota))
	}
	c.Reason = fmt.Sprintf("%d cameras (bound: %s); cpu %d (%d CPUs × %d); spool disk %s; spool quota %s; "+
		"per camera %g Mbit/s × (outage budget %s + 2 segments of %s); quota %s, spool disk needed %s",
		c.Cameras, c.Bound, c.CPU, max(cpus, 1), CamerasPerCPU, disk, quota,
		r.CameraBitrateMbps, r.OutageBudget, r.SegmentDuration, gb(c.QuotaBytes), gb(c.DiskBytes))
	return c
}

// gb formats a byte count in decimal gigabytes.
func gb(n int64) string { return fmt.Sprintf("%.2f GB", float64(n)/1e9) }

// Log logs the capacity, and warns when the spool disk holds the outage
// budget of fewer cameras than the node takes.
func (c Capacity) Log(log *zap.Logger) {
	log.Info("node capacity", zap.Int("cameras", c.Cameras), zap.String("bound", c.Bound),
		zap.Int64("spool_quota", c.QuotaBytes), zap.String("reason", c.Reason))
	if c.SpoolDisk >= 0 && c.SpoolDisk < c.Cameras {
		log.Warn("the spool disk holds the outage budget of fewer cameras than the node takes: a storage outage fills the disk first",
			zap.Int("cameras", c.Cameras), zap.Int("spool_disk_cameras", c.SpoolDisk), zap.Duration("outage_budget", c.outageBudget))
	}
}
