package synth

import (
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Config configures a Server.
type Config struct {
	// Addr is the TCP address the RTSP server listens on.
	// It defaults to "127.0.0.1:0" (a free port chosen at Start; see Addr).
	Addr string

	// Cameras are served from Start. More can be added with AddCamera.
	Cameras []CameraSpec

	// Log receives the server's logs.
	// It defaults to a no-op logger.
	Log *zap.Logger

	// Tick is the period of the scheduler that writes due frames for all
	// cameras. Frames are sent at most Tick late.
	// It defaults to 10 ms.
	Tick time.Duration
}

// CameraSpec describes one synthetic camera.
type CameraSpec struct {
	// Path of the camera in the URL, without the leading slash ("cam1" is
	// served at rtsp://host:port/cam1). Required.
	Path string

	// Codec of the video track: CodecH264 or CodecH265.
	// It defaults to CodecH264.
	Codec string

	// Audio adds an audio track: AAC (16 kHz mono) unless AudioCodec says
	// otherwise.
	Audio bool

	// AudioCodec is the codec of the audio track: AudioAAC, AudioPCMU,
	// AudioPCMA or AudioOpus. Set, it adds the track without Audio.
	// It defaults to AudioAAC.
	AudioCodec string

	// Small starts the camera with the 640x360 clip instead of 1280x720.
	Small bool

	// User and Pass, when User is set, require RTSP authentication (basic or
	// digest); wrong credentials get 401.
	User, Pass string

	// InitialRTPTime is the RTP timestamp of media time zero on every track.
	// Set it near 2^32 to make timestamps wrap around soon after start.
	InitialRTPTime uint32
}

func (c CameraSpec) withDefaults() CameraSpec {
	c.Path = strings.Trim(c.Path, "/")
	if c.Codec == "" {
		c.Codec = CodecH264
	}
	return c
}

// audioCodec is the codec of the camera's audio track, "" for none.
func (c CameraSpec) audioCodec() string {
	if c.AudioCodec != "" {
		return c.AudioCodec
	}
	if c.Audio {
		return AudioAAC
	}
	return ""
}

func (c CameraSpec) validate() error {
	if c.Path == "" {
		return fmt.Errorf("camera path is empty: %w", ErrBadSpec)
	}
	if strings.ContainsAny(c.Path, " ?#\t\r\n") {
		return fmt.Errorf("camera path %q has invalid characters: %w", c.Path, ErrBadSpec)
	}
	if _, err := codecByName(c.Codec); err != nil {
		return fmt.Errorf("camera %q: %w", c.Path, err)
	}
	if ac := c.audioCodec(); ac != "" {
		if _, err := AudioClipFor(ac); err != nil {
			return fmt.Errorf("camera %q: %w", c.Path, err)
		}
	}
	if c.User == "" && c.Pass != "" {
		return fmt.Errorf("camera %q: password without user: %w", c.Path, ErrBadSpec)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	if c.Tick <= 0 {
		c.Tick = 10 * time.Millisecond
	}
	return c
}
