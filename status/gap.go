package status

// Cause says why a camera has no recording for a while (docs/recording.md,
// Gaps). Causes are short codes of [a-z_], stored in gap record keys.
type Cause string

// Causes of gaps, written by the recorder (or derived by readers, where
// marked).
const (
	// CauseCameraOffline: the camera did not answer, dropped the
	// connection or sent nothing (status OFFLINE).
	CauseCameraOffline Cause = "camera_offline"
	// CauseCameraAuth: the camera refused the credentials.
	CauseCameraAuth Cause = "camera_auth"
	// CauseStreamUnsupported: the camera's stream cannot be recorded
	// (codec, unknown path, invalid or forbidden address, no keyframe in
	// time).
	CauseStreamUnsupported Cause = "stream_unsupported"
	// CauseCameraChanged: the camera's record changed (URL, transport,
	// sound) and the camera was reconnected.
	CauseCameraChanged Cause = "camera_changed"
	// CauseRTPLoss: packets were lost; video resumed at the next keyframe.
	CauseRTPLoss Cause = "rtp_loss"
	// CauseQueueOverflow: the camera's pipeline fell behind and dropped
	// units; video resumed at the next keyframe.
	CauseQueueOverflow Cause = "queue_overflow"
	// CauseCameraOverRate: the camera sent more bytes per second than
	// its cap (recording.max_camera_bitrate_mbps); units past it were
	// dropped and video resumed at the next keyframe within it.
	CauseCameraOverRate Cause = "camera_over_rate"
	// CauseNodeHandover: the camera moved between recorder nodes (or its
	// node stopped it and nobody recorded it meanwhile).
	CauseNodeHandover Cause = "node_handover"
	// CauseNodeCrash: the node recording the camera died; the node that
	// took it over records the gap from the end of the last stored segment.
	CauseNodeCrash Cause = "node_crash"
	// CauseUploadFailed: storage refused a segment for good and the spool
	// dropped it.
	CauseUploadFailed Cause = "upload_failed"
	// CauseSpoolQuota: the spool dropped a segment to keep within its quota
	// or its disk.
	CauseSpoolQuota Cause = "spool_quota"
	// CauseCameraBlocked: the camera's owner was blocked.
	CauseCameraBlocked Cause = "camera_blocked"
	// CauseCameraRemoved: the camera was removed from the registry.
	CauseCameraRemoved Cause = "camera_removed"
	// CauseRetention: derived by readers, never written: the recordings
	// are older than the camera's history_days and were deleted.
	CauseRetention Cause = "retention"
	// CauseRetentionQuota: the retention sweeper deleted the recordings,
	// oldest first, to keep the camera or its client within its storage
	// quota (docs/retention.md).
	CauseRetentionQuota Cause = "retention_quota"
	// CauseUnknown: derived by readers for a gap no record explains.
	CauseUnknown Cause = "unknown"
)

// causeRank orders causes for readers: where records overlap, the cause
// ranked first explains the gap (a camera offline during a handover is
// offline; a blocked client's cameras leave the registry, so their nodes
// see them removed). Causes not listed rank last.
var causeRank = []Cause{
	CauseCameraBlocked, CauseCameraRemoved, CauseCameraAuth, CauseStreamUnsupported,
	CauseCameraOffline, CauseCameraChanged, CauseNodeCrash, CauseNodeHandover,
	CauseSpoolQuota, CauseUploadFailed, CauseCameraOverRate, CauseQueueOverflow, CauseRTPLoss,
	CauseRetentionQuota, CauseRetention, CauseUnknown,
}

// Rank returns c's place in the order of causeRank (0 first); an unknown
// cause ranks after all of them.
func (c Cause) Rank() int {
	for i, k := range causeRank {
		if k == c {
			return i
		}
	}
	return len(causeRank)
}

// Known reports whether c is one of the causes of causeRank.
func (c Cause) Known() bool { return c.Rank() < len(causeRank) }

// Gap is one gap record: from StartMs, camera's recording was interrupted
// for Cause. It is stored next to the segments (storage.GapKey) and
// published on vigia.gaps.{camera}.
type Gap struct {
	// Camera is the camera id.
	Camera string `json:"camera"`
	// StartMs is where the gap begins, Unix milliseconds: the end of the
	// last segment before it, or the moment the cause began.
	StartMs int64 `json:"start_ms"`
	// EndMs is where the gap ends, Unix milliseconds; 0 while it is open
	// (readers end an open gap at the next recording).
	EndMs int64 `json:"end_ms"`
	// Cause says why.
	Cause Cause `json:"cause"`
	// Node is the recorder node that wrote the record.
	Node string `json:"node,omitempty"`
	// Detail is a fixed reason text of the cause, e.g. "unknown stream"
	// for CauseStreamUnsupported; never an error text of the camera.
	Detail string `json:"detail,omitempty"`
}

// Open reports whether the gap's end is not known yet.
func (g Gap) Open() bool { return g.EndMs == 0 }
