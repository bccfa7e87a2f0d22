package config

import "testing"

// FuzzLoadYAML: any configuration file is loaded and validated without a
// panic; what loads and validates has the fields a node needs.
func FuzzLoadYAML(f *testing.F) {
	f.Add([]byte("storage: {backend: s3, endpoint: 127.0.0.1:9000, bucket: b, access_key: k, secret_key: s}\n"))
	f.Add([]byte("recording: {segment_duration: 6s, spool_max_bytes: 1GiB}\ncameras:\n  - {id: \"cam-7\", url: \"rtsp://u:p@h/x\"}\n"))
	f.Add([]byte("a: &x [*x, *x]\n"))
	f.Add([]byte("ingest: {connect_rate: -1, backoff_max: 99999999999h}\n"))
	f.Add([]byte("<<: {data_dir: /tmp}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default()
		if err := c.LoadYAML(data); err != nil {
			return
		}
		if err := c.Resolve(); err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			return
		}
		if c.Recording.SegmentDuration <= 0 {
			t.Fatalf("valid config with segment duration %v", c.Recording.SegmentDuration)
		}
	})
}
