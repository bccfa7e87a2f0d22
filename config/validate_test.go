package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// validConfig returns a resolved configuration that passes Validate.
func validConfig(t *testing.T) *Config {
	t.Helper()
	c := Default()
	c.DataDir = t.TempDir()
	c.Cameras = []Camera{
		{ID: "cam-7", URL: "rtsp://user:pass@127.0.0.1:8554/h264", HistoryDays: 7},
		{ID: "cam_B-2", URL: "rtmps://h.example/live", Transport: "auto", Sound: 1, HistoryDays: 1},
	}
	if err := c.Resolve(); err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("base config invalid: %v", err)
	}
	return c
}

func s3(c *Config) {
	c.Storage.Backend = "s3"
	c.Storage.Endpoint = "127.0.0.1:9000"
	c.Storage.AccessKey = "ak"
	c.Storage.SecretKey = "sk"
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(c *Config)
		want  error // nil: valid
		parts []string
	}{
		{"base", func(c *Config) {}, nil, nil},
		{"s3 complete", s3, nil, nil},
		{"s3 URL endpoint", func(c *Config) { s3(c); c.Storage.Endpoint = "https://s3.example.com" }, nil, nil},
		{"nats cluster", func(c *Config) { c.NATS.URL = "nats://a:4222, tls://b:4222" }, nil, nil},
		{"console log", func(c *Config) { c.Log.Format = "console"; c.Log.Level = "debug" }, nil, nil},
		{"backend", func(c *Config) { c.Storage.Backend = "gcs" }, ErrInvalidValue,
			[]string{`config: storage.backend: invalid value "gcs"`}},
		{"s3 endpoint", func(c *Config) { s3(c); c.Storage.Endpoint = "" }, ErrRequired,
			[]string{"storage.endpoint: required when storage.backend is s3"}},
		{"s3 bucket", func(c *Config) { s3(c); c.Storage.Bucket = "" }, ErrRequired, []string{"storage.bucket"}},
		{"s3 access key", func(c *Config) { s3(c); c.Storage.AccessKey = "" }, ErrRequired, []string{"storage.access_key"}},
		{"s3 secret key", func(c *Config) { s3(c); c.Storage.SecretKey = "" }, ErrRequired, []string{"storage.secret_key"}},
		{"s3 bad endpoint URL", func(c *Config) { s3(c); c.Storage.Endpoint = "ftp://x" }, ErrInvalidValue,
			[]string{"storage.endpoint"}},
		{"s3 expiry", func(c *Config) { s3(c); c.Storage.SignedURLExpiry = Duration(8 * 24 * time.Hour) }, ErrInvalidValue,
			[]string{"storage.signed_url_expiry", "7 days"}},
		{"zero expiry", func(c *Config) { c.Storage.SignedURLExpiry = 0 }, ErrInvalidValue,
			[]string{"storage.signed_url_expiry"}},
		{"segment", func(c *Config) { c.Recording.SegmentDuration = 0 }, ErrInvalidValue,
			[]string{"recording.segment_duration"}},
		{"segment too long", func(c *Config) { c.Recording.SegmentDuration = Duration(11 * time.Minute) }, ErrInvalidValue,
			[]string{"recording.segment_duration", "at most 10m"}},
		{"negative fragment", func(c *Config) { c.Recording.FragmentDuration = Duration(-time.Second) }, ErrInvalidValue,
			[]string{"recording.fragment_duration"}},
		{"fragment not shorter", func(c *Config) { c.Recording.FragmentDuration = c.Recording.SegmentDuration }, ErrInvalidValue,
			[]string{"recording.fragment_duration", "less than recording.segment_duration"}},
		{"spool quota", func(c *Config) { c.Recording.SpoolMaxBytes = -1 }, ErrInvalidValue,
			[]string{"recording.spool_max_bytes"}},
		{"outage budget", func(c *Config) { c.Recording.OutageBudget = 0 }, ErrInvalidValue,
			[]string{"recording.outage_budget"}},
		{"camera bitrate", func(c *Config) { c.Recording.CameraBitrateMbps = 0 }, ErrInvalidValue,
			[]string{"recording.camera_bitrate_mbps"}},
		{"max cameras", func(c *Config) { c.Recording.MaxCameras = -1 }, ErrInvalidValue,
			[]string{"recording.max_cameras"}},
		{"upload concurrency", func(c *Config) { c.Recording.UploadConcurrency = 0 }, ErrInvalidValue,
			[]string{"recording.upload_concurrency"}},
		{"read timeout", func(c *Config) { c.Ingest.ReadTimeout = 0 }, ErrInvalidValue, []string{"ingest.read_timeout"}},
		{"connect rate", func(c *Config) { c.Ingest.ConnectRate = 0 }, ErrInvalidValue, []string{"ingest.connect_rate"}},
		{"connect concurrency", func(c *Config) { c.Ingest.ConnectConcurrency = 0 }, ErrInvalidValue, []string{"ingest.connect_concurrency"}},
		{"default transport", func(c *Config) { c.Ingest.DefaultTransport = "quic" }, ErrInvalidValue,
			[]string{"ingest.default_transport", `"quic"`}},
		{"log level", func(c *Config) { c.Log.Level = "loud" }, ErrInvalidValue, []string{"log.level", `"loud"`}},
		{"log format", func(c *Config) { c.Log.Format = "xml" }, ErrInvalidValue, []string{"log.format"}},
		{"http addr", func(c *Config) { c.HTTP.Addr = "8080" }, ErrInvalidValue, []string{"http.addr"}},
		{"http port", func(c *Config) { c.HTTP.Addr = "127.0.0.1:99999" }, ErrInvalidValue, []string{"http.addr"}},
		{"public url", func(c *Config) { c.HTTP.PublicURL = "cams.example.com" }, ErrInvalidValue,
			[]string{"http.public_url"}},
		{"nats url", func(c *Config) { c.NATS.URL = "nats://a:4222,http://b" }, ErrInvalidValue, []string{"nats.url"}},
		{"nats listen", func(c *Config) { c.NATS.Listen = "" }, ErrRequired, []string{"nats.listen"}},
		{"nats replicas 3 on a cluster", func(c *Config) { c.NATS.URL = "nats://a:4222"; c.NATS.Replicas = 3 }, nil, nil},
		{"nats replicas 0", func(c *Config) { c.NATS.URL = "nats://a:4222"; c.NATS.Replicas = 0 }, ErrInvalidValue,
			[]string{"nats.replicas", "1 to 5"}},
		{"nats replicas 6", func(c *Config) { c.NATS.URL = "nats://a:4222"; c.NATS.Replicas = 6 }, ErrInvalidValue,
			[]string{"nats.replicas"}},
		{"nats replicas embedded", func(c *Config) { c.NATS.Replicas = 3 }, ErrInvalidValue,
			[]string{"nats.replicas", "embedded server"}},
		{"data dir", func(c *Config) { c.DataDir = "" }, ErrRequired, []string{"data_dir"}},
		{"synth codec", func(c *Config) { c.Synth.Codec = "vp9" }, ErrInvalidValue, []string{"synth.codec"}},
		{"synth cameras", func(c *Config) { c.Synth.Cameras = -1 }, ErrInvalidValue, []string{"synth.cameras"}},
		{"camera id empty", func(c *Config) { c.Cameras[0].ID = "" }, ErrInvalidValue, []string{"cameras[0].id"}},
		{"camera id chars", func(c *Config) { c.Cameras[1].ID = "a/b" }, ErrInvalidValue, []string{"cameras[1].id", `"a/b"`}},
		{"camera id long", func(c *Config) { c.Cameras[0].ID = strings.Repeat("a", 65) }, ErrInvalidValue,
			[]string{"cameras[0].id"}},
		{"camera id 64", func(c *Config) { c.Cameras[0].ID = strings.Repeat("a", 64) }, nil, nil},
		{"camera id digits", func(c *Config) { c.Cameras[0].ID = "7" }, ErrInvalidValue,
			[]string{"cameras[0].id", `"7"`, "cameras created through the API"}},
		{"camera id zero-padded digits", func(c *Config) { c.Cameras[1].ID = "0042" }, ErrInvalidValue,
			[]string{"cameras[1].id", `"0042"`, "digits only"}},
		{"camera id digits and a letter", func(c *Config) { c.Cameras[0].ID = "7a"; c.Cameras[1].ID = "-7" }, nil, nil},
		{"camera id duplicate", func(c *Config) { c.Cameras[1].ID = "cam-7" }, ErrInvalidValue,
			[]string{"cameras[1].id", "duplicate of cameras[0].id"}},
		{"camera url missing", func(c *Config) { c.Cameras[0].URL = "" }, ErrRequired, []string{"cameras[0].url"}},
		{"camera url scheme", func(c *Config) { c.Cameras[0].URL = "http://u:hunter2@h/x" }, ErrInvalidValue,
			[]string{"cameras[0].url", "u:xxxxx@h"}},
		{"camera url unparseable", func(c *Config) { c.Cameras[0].URL = "rtsp://u:hunter2@h:port/x" }, ErrInvalidValue,
			[]string{"cameras[0].url"}},
		{"camera url no host", func(c *Config) { c.Cameras[0].URL = "rtsp:///x" }, ErrInvalidValue,
			[]string{"cameras[0].url", "no host"}},
		{"camera transport", func(c *Config) { c.Cameras[0].Transport = "tcp4" }, ErrInvalidValue,
			[]string{"cameras[0].transport"}},
		{"camera sound", func(c *Config) { c.Cameras[0].Sound = 2 }, ErrInvalidValue, []string{"cameras[0].sound"}},
		{"camera history", func(c *Config) { c.Cameras[1].HistoryDays = 0 }, ErrInvalidValue,
			[]string{"cameras[1].history_days"}},
		{"secret short", func(c *Config) { c.Security.Secret = "0123456789abcde" }, ErrInvalidValue, []string{"security.secret", "15 bytes"}},
		{"rotation", func(c *Config) {
			c.Security.Secret, c.Security.PreviousSecret = "new-secret-0123456789", "old-secret-0123456789"
			c.Security.PreviousUntil = Time(time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC))
		}, nil, nil},
		{"rotation without its end", func(c *Config) {
			c.Security.Secret, c.Security.PreviousSecret = "new-secret-0123456789", "old-secret-0123456789"
		}, ErrRequired, []string{"security.previous_until"}},
		{"rotation end without a secret", func(c *Config) { c.Security.PreviousUntil = Time(time.Now()) }, ErrRequired,
			[]string{"security.previous_secret"}},
		{"rotation to the same secret", func(c *Config) {
			c.Security.Secret, c.Security.PreviousSecret = "new-secret-0123456789", "new-secret-0123456789"
			c.Security.PreviousUntil = Time(time.Now())
		}, ErrInvalidValue, []string{"security.previous_secret", "equals security.secret"}},
		{"previous secret short", func(c *Config) {
			c.Security.PreviousSecret, c.Security.PreviousUntil = "short", Time(time.Now())
		}, ErrInvalidValue, []string{"security.previous_secret"}},
		{"live url expiry", func(c *Config) { c.Security.LiveURLExpiry = 0 }, ErrInvalidValue, []string{"security.live_url_expiry"}},
		{"trusted proxies", func(c *Config) { c.HTTP.TrustedProxies = "10.0.0.0/8, 127.0.0.1 ,::1, fd00::/8" }, nil, nil},
		{"trusted proxies bad", func(c *Config) { c.HTTP.TrustedProxies = "10.0.0.0/8,proxy.example" }, ErrInvalidValue,
			[]string{"http.trusted_proxies", `"proxy.example"`}},
		{"login account attempts", func(c *Config) { c.API.LoginAccountAttempts = 0 }, ErrInvalidValue,
			[]string{"api.login_account_attempts"}},
		{"http header timeout", func(c *Config) { c.HTTP.ReadHeaderTimeout = 0 }, ErrInvalidValue,
			[]string{"http.read_header_timeout"}},
		{"http connections", func(c *Config) { c.HTTP.MaxConnections = 0 }, ErrInvalidValue,
			[]string{"http.max_connections"}},
		{"http no per-address limit", func(c *Config) { c.HTTP.MaxConnectionsPerAddress = 0 }, nil, nil},
		{"http per-address", func(c *Config) { c.HTTP.MaxConnectionsPerAddress = -1 }, ErrInvalidValue,
			[]string{"http.max_connections_per_address"}},
		{"rtmp pending per address", func(c *Config) { c.RTMP.MaxPendingPerAddress = 0 }, ErrInvalidValue,
			[]string{"rtmp.max_pending_per_address"}},
		{"rtmp auth timeout", func(c *Config) { c.RTMP.AuthTimeout = 0 }, ErrInvalidValue, []string{"rtmp.auth_timeout"}},
		{"no sound transcodes", func(c *Config) { c.WebRTC.AudioTranscodeMax = 0 }, nil, nil},
		{"sound transcodes", func(c *Config) { c.WebRTC.AudioTranscodeMax = -1 }, ErrInvalidValue,
			[]string{"webrtc.audio_transcode_max"}},
		{"rtmp budget under a message", func(c *Config) { c.RTMP.PreAuthBudget = 1024 }, ErrInvalidValue,
			[]string{"rtmp.pre_auth_budget", "rtmp.pre_auth_max_message"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig(t)
			tt.edit(c)
			err := c.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			checkErr(t, err, tt.want, tt.parts...)
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error leaks a password: %v", err)
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key == "" {
				t.Errorf("err %v is not a *KeyError with a key", err)
			}
		})
	}
}

func TestValidateReportsAll(t *testing.T) {
	c := validConfig(t)
	c.Storage.Backend = "gcs"
	c.Ingest.DefaultTransport = "quic"
	c.Cameras[0].Sound = 3
	err := c.Validate()
	checkErr(t, err, ErrInvalidValue, "storage.backend", "ingest.default_transport", "cameras[0].sound")
}

func TestParsePrefixList(t *testing.T) {
	got, err := ParsePrefixList(" 10.1.2.3/8, 127.0.0.1,::1,::ffff:192.168.0.0/112 ,")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "127.0.0.1/32", "::1/128", "192.168.0.0/16"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("entry %d: %s, want %s", i, got[i], want[i])
		}
	}
	if l, err := ParsePrefixList(""); err != nil || len(l) != 0 {
		t.Errorf("empty: %v, %v", l, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "host", "10.0.0.0/8/1"} {
		if _, err := ParsePrefixList(bad); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("%q: %v, want ErrInvalidValue", bad, err)
		}
	}
}

func TestTimeText(t *testing.T) {
	var v Time
	if err := v.UnmarshalText([]byte("2025-07-01T00:00:00Z")); err != nil || v.String() != "2025-07-01T00:00:00Z" {
		t.Fatalf("%v %q", err, v)
	}
	if err := v.UnmarshalText([]byte("")); err != nil || !v.Time().IsZero() {
		t.Fatalf("empty: %v %v", err, v)
	}
	if err := v.UnmarshalText([]byte("tomorrow")); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("bad text: %v", err)
	}
}
