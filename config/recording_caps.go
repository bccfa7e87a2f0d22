package config

// CameraRateCap returns the byte-rate cap of one camera in bytes per
// second: recording.max_camera_bitrate_mbps, or 4 x
// recording.camera_bitrate_mbps when that is 0.
func (r RecordingConfig) CameraRateCap() float64 {
	mbps := r.MaxCameraBitrateMbps
	if mbps <= 0 {
		mbps = 4 * r.CameraBitrateMbps
	}
	return mbps * 1e6 / 8
}
