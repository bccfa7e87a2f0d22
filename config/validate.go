package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/logging"
)

// maxS3Expiry is the longest lifetime of an S3 presigned URL.
const maxS3Expiry = 7 * 24 * time.Hour

// Validate checks c after Resolve and reports every problem found, each
// naming its key.
func (c *Config) Validate() error {
	v := &validator{}
	v.required("data_dir", c.DataDir)
	if _, err := logging.ParseLevel(c.Log.Level); err != nil {
		v.add("log.level", fmt.Errorf("%w %q (want debug, info, warn or error)", ErrInvalidValue, c.Log.Level))
	}
	v.oneOf("log.format", c.Log.Format, "", "json", "console")
	v.hostPort("http.addr", c.HTTP.Addr)
	if c.HTTP.PublicURL != "" {
		v.url("http.public_url", c.HTTP.PublicURL, "http", "https")
	}
	c.validateStorage(v)
	c.validateNATS(v)
	c.validateRecording(v)
	c.validateRetentionExport(v)
	v.positive("ingest.read_timeout", c.Ingest.ReadTimeout)
	if !(c.Ingest.ConnectRate > 0) {
		v.add("ingest.connect_rate", fmt.Errorf("%w %v (want more than 0)", ErrInvalidValue, c.Ingest.ConnectRate))
	}
	if c.Ingest.ConnectConcurrency < 1 {
		v.add("ingest.connect_concurrency", fmt.Errorf("%w %d (want 1 or more)", ErrInvalidValue, c.Ingest.ConnectConcurrency))
	}
	v.oneOf("ingest.default_transport", c.Ingest.DefaultTransport, "tcp", "udp", "auto")
	v.oneOf("recording.spool_sync", c.Recording.SpoolSync, "group", "file")
	v.oneOf("storage.checksum", c.Storage.Checksum, "crc32c", "sha256")
	if c.Synth.Cameras < 0 {
		v.add("synth.cameras", fmt.Errorf("%w %d (want 0 or more)", ErrInvalidValue, c.Synth.Cameras))
	}
	v.oneOf("synth.codec", c.Synth.Codec, "h264", "h265", "mixed")
	c.validateCameras(v)
	c.validateAPI(v)
	c.validateListeners(v)
	c.validateWebRTC(v)
	c.validateSecurity(v)
	return errors.Join(v.errs...)
}

func (c *Config) validateStorage(v *validator) {
	s := c.Storage
	v.oneOf("storage.backend", s.Backend, "fs", "s3")
	v.positive("storage.signed_url_expiry", s.SignedURLExpiry)
	switch s.Backend {
	case "fs":
		v.required("storage.path", s.Path)
	case "s3":
		const why = " when storage.backend is s3"
		for _, r := range []struct{ key, val string }{
			{"storage.endpoint", s.Endpoint},
			{"storage.bucket", s.Bucket},
			{"storage.access_key", s.AccessKey},
			{"storage.secret_key", s.SecretKey},
		} {
			if r.val == "" {
				v.add(r.key, fmt.Errorf("%w%s", ErrRequired, why))
			}
		}
		if strings.Contains(s.Endpoint, "://") {
			v.url("storage.endpoint", s.Endpoint, "http", "https")
		} else if s.Endpoint != "" {
			v.hostPort("storage.endpoint", s.Endpoint)
		}
		if s.SignedURLExpiry.Duration() > maxS3Expiry {
			v.add("storage.signed_url_expiry", fmt.Errorf("%w %s (at most 7 days with s3)", ErrInvalidValue, s.SignedURLExpiry))
		}
	}
}

func (c *Config) validateNATS(v *validator) {
	if r := c.NATS.Replicas; r < 1 || r > 5 {
		v.add("nats.replicas", fmt.Errorf("%w %d (want 1 to 5)", ErrInvalidValue, r))
	} else if r != 1 && c.NATS.URL == "" {
		v.add("nats.replicas", fmt.Errorf("%w %d (want 1 with the embedded server; set nats.url to a cluster for more)", ErrInvalidValue, r))
	}
	if c.NATS.URL != "" {
		for _, u := range strings.Split(c.NATS.URL, ",") {
			v.url("nats.url", strings.TrimSpace(u), "nats", "tls", "ws", "wss")
		}
		return
	}
	v.hostPort("nats.listen", c.NATS.Listen)
	v.required("nats.store_dir", c.NATS.StoreDir)
}

// MaxSegmentDuration is the largest recording.segment_duration.
const MaxSegmentDuration = Duration(10 * time.Minute)

func (c *Config) validateRecording(v *validator) {
	r := c.Recording
	v.positive("recording.segment_duration", r.SegmentDuration)
	if r.SegmentDuration > MaxSegmentDuration {
		// Readers look a segment's longest length back from a time
		// (catalogue): the bound keeps that under an hour folder.
		v.add("recording.segment_duration", fmt.Errorf("%w %s (want at most %s)", ErrInvalidValue, r.SegmentDuration, MaxSegmentDuration))
	}
	v.positive("recording.fragment_duration", r.FragmentDuration)
	if r.FragmentDuration > 0 && r.SegmentDuration > 0 && r.FragmentDuration >= r.SegmentDuration {
		v.add("recording.fragment_duration", fmt.Errorf("%w %s (want less than recording.segment_duration %s)",
			ErrInvalidValue, r.FragmentDuration, r.SegmentDuration))
	}
	v.required("recording.spool_dir", r.SpoolDir)
	if r.ReleaseMemoryEvery < 0 {
		v.add("recording.release_memory_every", fmt.Errorf("%w %s (want 0 or more)", ErrInvalidValue, r.ReleaseMemoryEvery))
	}
	if r.SpoolMaxBytes < 0 {
		v.add("recording.spool_max_bytes", fmt.Errorf("%w %s (want 0 or more)", ErrInvalidValue, r.SpoolMaxBytes))
	}
	v.positive("recording.outage_budget", r.OutageBudget)
	if !(r.CameraBitrateMbps > 0) {
		v.add("recording.camera_bitrate_mbps", fmt.Errorf("%w %v (want more than 0)", ErrInvalidValue, r.CameraBitrateMbps))
	}
	if r.MaxCameraBitrateMbps < 0 {
		v.add("recording.max_camera_bitrate_mbps", fmt.Errorf("%w %v (want 0 or more)", ErrInvalidValue, r.MaxCameraBitrateMbps))
	}
	if r.MaxSegmentSize < 1<<20 {
		v.add("recording.max_segment_size", fmt.Errorf("%w %s (want 1MiB or more)", ErrInvalidValue, r.MaxSegmentSize))
	}
	if r.MaxCameras < 0 {
		v.add("recording.max_cameras", fmt.Errorf("%w %d (want 0 or more)", ErrInvalidValue, r.MaxCameras))
	}
	if r.UploadConcurrency < 1 {
		v.add("recording.upload_concurrency", fmt.Errorf("%w %d (want 1 or more)", ErrInvalidValue, r.UploadConcurrency))
	}
}

// validator collects the problems found by Validate.
type validator struct {
	errs []error
}

func (v *validator) add(key string, err error) {
	v.errs = append(v.errs, &KeyError{Key: key, Err: err})
}

func (v *validator) required(key, val string) {
	if val == "" {
		v.add(key, ErrRequired)
	}
}

func (v *validator) oneOf(key, val string, allowed ...string) {
	if !slices.Contains(allowed, val) {
		want := strings.Join(slices.DeleteFunc(slices.Clone(allowed), func(s string) bool { return s == "" }), ", ")
		v.add(key, fmt.Errorf("%w %q (want one of %s)", ErrInvalidValue, val, want))
	}
}

func (v *validator) positive(key string, d Duration) {
	if d <= 0 {
		v.add(key, fmt.Errorf("%w %s (want more than 0)", ErrInvalidValue, d))
	}
}

func (v *validator) hostPort(key, addr string) {
	if addr == "" {
		v.add(key, ErrRequired)
		return
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		v.add(key, fmt.Errorf("%w %q (want host:port)", ErrInvalidValue, addr))
	}
}

// url checks that raw parses with one of schemes and has a host. The value
// is redacted in the message.
func (v *validator) url(key, raw string, schemes ...string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.add(key, fmt.Errorf("%w %q (not a URL)", ErrInvalidValue, logging.RedactURL(raw)))
	case !slices.Contains(schemes, strings.ToLower(u.Scheme)):
		v.add(key, fmt.Errorf("%w %q (want a %s URL)", ErrInvalidValue, logging.RedactURL(raw), strings.Join(schemes, ", ")))
	case u.Host == "":
		v.add(key, fmt.Errorf("%w %q (no host)", ErrInvalidValue, logging.RedactURL(raw)))
	}
}
