package config

import "fmt"

// Config is the configuration of a Vigia process. Every leaf field carries
// its YAML key, default and documentation in struct tags; Keys lists them.
type Config struct {
	DataDir       string          `yaml:"data_dir" default:"./data" doc:"Directory for local state; relative paths are resolved against the working directory."`
	NodeID        string          `yaml:"node_id" doc:"Name of this node in the cluster. Defaults to the host name."`
	Log           LogConfig       `yaml:"log"`
	HTTP          HTTPConfig      `yaml:"http"`
	Storage       StorageConfig   `yaml:"storage"`
	NATS          NATSConfig      `yaml:"nats"`
	Recording     RecordingConfig `yaml:"recording"`
	Ingest        IngestConfig    `yaml:"ingest"`
	Security      SecurityConfig  `yaml:"security"`
	OperatorToken string          `yaml:"operator_token" secret:"true" doc:"Token that authorises the restricted (operator) operations of the HTTP interface."`
	Database      DatabaseConfig  `yaml:"database"`
	API           APIConfig       `yaml:"api"`
	RTMP          RTMPConfig      `yaml:"rtmp"`
	P2P           P2PConfig       `yaml:"p2p"`
	Synth         SynthConfig     `yaml:"synth"`
	Thumbs        ThumbsConfig    `yaml:"thumbs"`
	Motion        MotionConfig    `yaml:"motion"`
	Retention     RetentionConfig `yaml:"retention"`
	Export        ExportConfig    `yaml:"export"`
	WebRTC        WebRTCConfig    `yaml:"webrtc"`
	Cameras       []Camera        `yaml:"cameras" doc:"Static cameras, recorded without being registered through the API. Set in the file only."`
}

// LogConfig is the log section.
type LogConfig struct {
	Level  string `yaml:"level" default:"info" doc:"Lowest level logged: debug, info, warn or error."`
	Format string `yaml:"format" doc:"json or console. Empty means json, except console for the serve command."`
}

// FormatOr returns the configured log format, or def when it is empty (the
// serve command passes "console", the others "json").
func (l LogConfig) FormatOr(def string) string {
	if l.Format == "" {
		return def
	}
	return l.Format
}

// HTTPConfig is the http section.
type HTTPConfig struct {
	Addr                     string   `yaml:"addr" default:"127.0.0.1:8080" doc:"Address (host:port) the HTTP interface listens on."`
	PublicURL                string   `yaml:"public_url" doc:"Base URL clients use to reach this node, put in the URLs handed out. Defaults to http://{http.addr}."`
	ReadHeaderTimeout        Duration `yaml:"read_header_timeout" default:"10s" doc:"Time allowed to receive a request's headers; a slower client is disconnected."`
	ReadTimeout              Duration `yaml:"read_timeout" default:"60s" doc:"Time allowed to receive a whole request, headers and body; a slower client is disconnected (the API answers 408 to a late body). Responses (video downloads, live video) are not limited."`
	IdleTimeout              Duration `yaml:"idle_timeout" default:"2m" doc:"How long a kept-alive connection may wait for its next request."`
	MaxConnections           int      `yaml:"max_connections" default:"4096" doc:"Connections the HTTP interface holds at once; past it new ones are closed at once and counted in vigia_rejected_connections_total."`
	MaxConnectionsPerAddress int      `yaml:"max_connections_per_address" default:"256" doc:"Connections from one address (an IPv6 /64 counts as one address); past it new ones from that address are closed at once and counted. Connections from http.trusted_proxies are not capped per address (every client comes through them). 0: no limit, for a node behind a load balancer not listed in http.trusted_proxies."`
	TrustedProxies           string   `yaml:"trusted_proxies" doc:"Comma-separated addresses or CIDRs (10.0.0.0/8, 127.0.0.1) of the reverse proxies in front of this node. The client address of a request from one of them is read from X-Forwarded-For (the nearest address not in the list); X-Forwarded-For from any other peer is ignored. Empty: the peer address is the client address."`
	MetricsToken             string   `yaml:"metrics_token" secret:"true" doc:"Token a metrics scraper sends (Authorization: Bearer, or ?token=) to read /metrics; an operator token is also accepted, and on a serve node a client on this machine needs none. Without a token /metrics answers 401 (docs/metrics.md). /healthz needs no token."`
	CORSOrigins              string   `yaml:"cors_origins" doc:"Comma-separated origins (https://host[:port]) of pages allowed to read this node's live video cross-origin (LL-HLS and WHEP): in a cluster, the public URLs of the nodes serving the API's player page. The origin of http.public_url is always allowed, and pages on this machine (localhost, loopback addresses) when http.public_url is on a loopback host; no other site's page is (no Access-Control-Allow-Origin: *)."`
}

// StorageConfig is the storage section.
type StorageConfig struct {
	Backend         string   `yaml:"backend" default:"fs" doc:"Where recordings and images are stored: fs (local directory) or s3."`
	Path            string   `yaml:"path" doc:"Root directory of the fs backend. Defaults to {data_dir}/storage."`
	Endpoint        string   `yaml:"endpoint" doc:"S3 endpoint, host:port or URL. Required for s3."`
	Bucket          string   `yaml:"bucket" default:"vigia" doc:"S3 bucket. Required for s3."`
	AccessKey       string   `yaml:"access_key" doc:"S3 access key. Required for s3."`
	SecretKey       string   `yaml:"secret_key" secret:"true" doc:"S3 secret key. Required for s3."`
	Region          string   `yaml:"region" default:"us-east-1" doc:"S3 region."`
	UseSSL          bool     `yaml:"use_ssl" default:"false" doc:"Use HTTPS for a host:port S3 endpoint (a URL endpoint says it with its scheme)."`
	Checksum        string   `yaml:"checksum" default:"crc32c" doc:"How S3 uploads are protected: crc32c (unsigned body with a CRC32C trailer the server checks; needs trailing checksums: MinIO, AWS S3) or sha256 (SHA-256 chunk signatures over plain HTTP, for servers without trailing checksums; costs a hash of every byte)."`
	ObjectLock      bool     `yaml:"object_lock" default:"false" doc:"The S3 bucket has (or, created at start, gets) Object Lock: legal holds also lock the held objects in the bucket, and deletes remove every version of an object (docs/retention.md, Legal holds)."`
	SignedURLExpiry Duration `yaml:"signed_url_expiry" default:"5m" doc:"Lifetime of the presigned or signed storage URLs handed out (recordings, thumbnails, snapshots, event images, downloadable videos); they cannot be recalled, so a blocked user keeps reading the objects it already has URLs of for up to this time (at most 7 days with s3)."`
}

// NATSConfig is the nats section.
type NATSConfig struct {
	URL      string `yaml:"url" doc:"NATS server URL(s), comma-separated. Empty starts an embedded server."`
	Token    string `yaml:"token" secret:"true" doc:"NATS authentication token (client token, or the token the embedded server requires)."`
	Listen   string `yaml:"listen" default:"127.0.0.1:4222" doc:"Client address of the embedded server; port 0 picks a free port."`
	StoreDir string `yaml:"store_dir" doc:"JetStream directory of the embedded server. Defaults to {data_dir}/nats."`
	Replicas int    `yaml:"replicas" default:"1" doc:"Copies of every stream and bucket, 1 to 5 (3 on a three-server cluster); 1 with the embedded server. Raised on existing streams and buckets at start, never lowered (docs/nats.md)."`
}

// RecordingConfig is the recording section.
type RecordingConfig struct {
	SegmentDuration      Duration `yaml:"segment_duration" default:"60s" doc:"Target length of a recording segment, at most 10m; segments are cut at the first keyframe after it, and never last longer than the target plus the larger of the target and 1m (readers look that far back). Set it alike on every node."`
	FragmentDuration     Duration `yaml:"fragment_duration" default:"1s" doc:"Target length of an fMP4 fragment (the unit written and fsynced to the spool). Less than recording.segment_duration."`
	SpoolDir             string   `yaml:"spool_dir" doc:"Local directory where segments are written before upload. Defaults to {data_dir}/spool."`
	SpoolMaxBytes        Size     `yaml:"spool_max_bytes" default:"0" doc:"Quota of the spool's backlog: the finished segments waiting for storage behind a newer finished segment of their camera (segments being written and each camera's newest finished one do not count, so a storage that keeps up never reaches it); past it segments are dropped, oldest first among the cameras whose backlog is over an equal share of the quota, so one camera's backlog never drops another's segments. 0 sizes it to ride out recording.outage_budget at the node's capacity: cameras x recording.camera_bitrate_mbps x recording.outage_budget (docs/recording.md)."`
	OutageBudget         Duration `yaml:"outage_budget" default:"10m" doc:"How long a storage outage the spool rides out without loss at the node's capacity; sizes the default recording.spool_max_bytes and, with the spool disk's room, the default recording.max_cameras."`
	CameraBitrateMbps    float64  `yaml:"camera_bitrate_mbps" default:"2" doc:"Bitrate in Mbit/s a camera is planned with, for the default recording.spool_max_bytes and recording.max_cameras."`
	MaxCameraBitrateMbps float64  `yaml:"max_camera_bitrate_mbps" default:"0" doc:"Cap in Mbit/s on what one camera may send (a token bucket holding 2 s of it, at least 1 MiB): units past it are dropped (vigia_dropped_frames_total{reason=\"camera_over_rate\"}) and video resumes at the next keyframe within it, the hole recorded as camera_over_rate. 0 takes 4 x recording.camera_bitrate_mbps."`
	MaxSegmentSize       Size     `yaml:"max_segment_size" default:"256MiB" doc:"Largest size of one segment: a segment is cut at the first keyframe past it (and closed at twice it without a keyframe), whatever recording.segment_duration."`
	MaxCameras           int      `yaml:"max_cameras" default:"0" doc:"Cameras this node records at most (its capacity, exported as vigia_node_capacity_cameras). 0 derives it: the least of 150 per CPU, what the spool disk holds (recording.camera_bitrate_mbps x (recording.outage_budget + 2 x recording.segment_duration) per camera) and, when recording.spool_max_bytes is set, what that quota holds for recording.outage_budget."`
	SpoolSync            string   `yaml:"spool_sync" default:"group" doc:"How fragments are made durable: group (one syncfs of the spool's filesystem at most every 250 ms for every fragment that ended before it, the camera going on meanwhile; Linux, elsewhere file) or file (an fsync per camera and fragment, for a spool sharing its filesystem with other heavy writers)."`
	UploadConcurrency    int      `yaml:"upload_concurrency" default:"4" doc:"Segments uploaded at the same time."`
	ReleaseMemoryEvery   Duration `yaml:"release_memory_every" default:"30s" doc:"How often a recorder hands the memory its Go heap freed back to the system (a forced collection), and what C allocations (libavcodec) freed (malloc_trim); 0 leaves it to the Go runtime and glibc, which keep the resident set near its recent peak."`
}

// IngestConfig is the ingest section.
type IngestConfig struct {
	ReadTimeout          Duration `yaml:"read_timeout" default:"10s" doc:"A camera that sends nothing for this long is disconnected and retried."`
	ConnectRate          float64  `yaml:"connect_rate" default:"200" doc:"Connection attempts per second, all cameras together (a node starting 300 cameras issues them in 1.5 s)."`
	ConnectConcurrency   int      `yaml:"connect_concurrency" default:"256" doc:"Connection attempts in progress at once, all cameras together: an attempt holds its place until the camera's first media, its failure or 3 s, so start-up goes as fast as the cameras and the node answer."`
	AllowPrivateNetworks bool     `yaml:"allow_private_networks" default:"false" doc:"Allow camera URLs that resolve to loopback, private or link-local addresses."`
	BackoffMax           Duration `yaml:"backoff_max" default:"60s" doc:"Longest wait between reconnection attempts of a camera once its fast retries (every 1 s for the first 2 minutes of an outage) are over; the wait starts at 1 s and doubles with each attempt that brings no media, with jitter. Meanwhile an RTSP or RTMP camera is probed every second (a TCP connection): no attempt while its port does not answer, one as soon as it answers (docs/recording.md, Reconnection)."`
	PermanentRetry       Duration `yaml:"permanent_retry" default:"5m" doc:"Wait before retrying a camera that failed permanently (bad credentials, unknown stream, unsupported codec)."`
	DefaultTransport     string   `yaml:"default_transport" default:"tcp" doc:"RTSP transport for cameras that do not set one: tcp, udp or auto."`
}

// SecurityConfig is the security section.
type SecurityConfig struct {
	Secret         string   `yaml:"secret" secret:"true" doc:"Secret every signing and sealing key is derived from (API digests, storage URLs, live tokens, RTMP stream keys, sealed camera credentials; docs/security.md), shared by all nodes, 16 bytes or more. Generated under data_dir when empty."`
	PreviousSecret string   `yaml:"previous_secret" secret:"true" doc:"The secret before a rotation: values signed under it keep verifying until security.previous_until, and camera credentials sealed under it keep opening (the API re-seals them under security.secret). Empty: no rotation."`
	PreviousUntil  Time     `yaml:"previous_until" doc:"End of the rotation overlap (RFC 3339, e.g. 2025-07-01T00:00:00Z): from then on values signed under security.previous_secret are refused. Required with security.previous_secret."`
	LiveURLExpiry  Duration `yaml:"live_url_expiry" default:"2m" doc:"Lifetime of the live URLs handed out by the API (live_url, the live URL operation, the player page, which renews its URL before it expires); a blocked user's live video stops within this time."`
}

// DatabaseConfig is the database section.
type DatabaseConfig struct {
	URL string `yaml:"url" secret:"url" doc:"Database URL. Empty uses SQLite under data_dir."`
}

// SynthConfig is the synth section.
type SynthConfig struct {
	Cameras int    `yaml:"cameras" default:"0" doc:"Synthetic cameras started by the serve command."`
	Codec   string `yaml:"codec" default:"h264" doc:"Codec of the synthetic cameras: h264, h265 or mixed."`
}

// ThumbsConfig is the thumbs section (thumbnails and snapshots).
type ThumbsConfig struct {
	Width   int      `yaml:"width" default:"320" doc:"Width of minute and hourly thumbnails in pixels; the height keeps the aspect ratio."`
	Minute  Duration `yaml:"minute" default:"1m" doc:"Interval of the minute thumbnails: the first keyframe of each interval becomes one. Shorter only for tests."`
	Workers int      `yaml:"workers" default:"1" doc:"Thumbnails decoded in parallel."`
	Queue   int      `yaml:"queue" default:"1024" doc:"Thumbnails waiting for a worker; past it new ones are dropped and counted."`
}

// MotionConfig is the motion section (motion detection, event type 5).
type MotionConfig struct {
	Enabled     bool     `yaml:"enabled" default:"true" doc:"Detect motion on every recorded camera and publish motion events."`
	Sensitivity float64  `yaml:"sensitivity" default:"0.5" doc:"Motion sensitivity from 0 (least) to 1 (most): lower thresholds on frame sizes and on the changed area."`
	MinDuration Duration `yaml:"min_duration" default:"1s" doc:"Shortest motion that makes an event."`
	MaxDuration Duration `yaml:"max_duration" default:"60s" doc:"Longest event; longer motion is split into events of this length."`
}

// RTMPConfig is the rtmp section (RTMP push ingest).
type RTMPConfig struct {
	Addr                 string   `yaml:"addr" default:":1935" doc:"Address (host:port) the RTMP push server listens on; a cluster node (serve, recorder) listens from the start, other modes when they record their first push camera. Port 0 picks a free port."`
	PublicHost           string   `yaml:"public_host" doc:"Host put in the rtmp_url handed to push cameras (the port is the one of rtmp.addr). Defaults to the host of http.public_url."`
	MaxConnections       int      `yaml:"max_connections" default:"1024" doc:"Connections the RTMP push server holds at once, publishing or not; past it new ones are closed at once and counted in vigia_rejected_connections_total."`
	MaxPendingPerAddress int      `yaml:"max_pending_per_address" default:"16" doc:"Connections not yet authenticated (no publish with a valid stream key yet) from one address, an IPv6 /64 counting as one; past it new ones from that address are closed at once. Cameras publishing do not count."`
	AuthTimeout          Duration `yaml:"auth_timeout" default:"10s" doc:"Time from accepting a connection to its publish being authenticated, handshake and commands included; traffic does not extend it. Past it the connection is closed."`
	PreAuthMaxMessage    Size     `yaml:"pre_auth_max_message" default:"8KiB" doc:"Largest message accepted before the publish is authenticated (encoders send connect, createStream and publish in under 1 KiB); until then a connection also holds at most two such messages partly received, on at most 8 chunk streams."`
	PreAuthBudget        Size     `yaml:"pre_auth_budget" default:"8MiB" doc:"Memory that all connections not yet authenticated may hold together in partly received messages; the connection that would go past it is closed."`
}

// P2PConfig is the p2p section (P2P cameras through a gateway).
type P2PConfig struct {
	Resolver      string   `yaml:"resolver" secret:"url" doc:"How a P2P camera's serial, password and stream become a stream URL: a URL template with {serial} {user} {password} {stream} {camera} (rtsp, rtsps, rtmp or rtmps, e.g. rtsp://{user}:{password}@gateway:8554/{serial}/{stream}), or the http(s) URL of a lookup service. Empty: P2P cameras fail with ERRO PERMANENTE."`
	User          string   `yaml:"user" default:"admin" doc:"{user} of P2P cameras whose URL names none."`
	LookupTimeout Duration `yaml:"lookup_timeout" default:"10s" doc:"Timeout of one request to the P2P lookup service."`
}

// RetentionConfig is the retention section (history_days expiry).
type RetentionConfig struct {
	Enabled       bool     `yaml:"enabled" default:"true" doc:"Delete each camera's objects after its history_days (one node of the cluster sweeps at a time)."`
	SweepInterval Duration `yaml:"sweep_interval" default:"1h" doc:"Time between two retention sweeps."`
	Lifecycle     bool     `yaml:"lifecycle" default:"true" doc:"Install S3 lifecycle expiry rules (by the retention-days object tag) where the store supports them; the sweeper runs as well."`
	CameraQuota   Size     `yaml:"camera_quota" default:"0" doc:"Most bytes of recordings (rec/ objects) one camera may keep; past it the sweeper deletes its oldest segments (gap cause retention_quota, docs/retention.md). 0: no quota."`
	ClientQuota   Size     `yaml:"client_quota" default:"0" doc:"Most bytes of recordings the cameras of one client (API cameras) may keep together; past it the sweeper deletes the client's oldest segments. 0: no quota."`
	EventKeepDays int      `yaml:"event_keep_days" default:"0" doc:"Days the recordings around the events of API cameras are kept when that is longer than their history_days, for cameras without their own event_keep_days; 0 keeps them no longer (docs/retention.md). Needs retention.lifecycle false on stores with lifecycle rules."`
	EventPreRoll  Duration `yaml:"event_pre_roll" default:"30s" doc:"Video kept before each event under retention.event_keep_days."`
	EventPostRoll Duration `yaml:"event_post_roll" default:"90s" doc:"Video kept after each event's start under retention.event_keep_days."`
}

// ExportConfig is the export section (downloadable videos).
type ExportConfig struct {
	Enabled       bool     `yaml:"enabled" default:"true" doc:"Run downloadable video jobs from the vigia.jobs.export work queue on this node."`
	MaxRange      Duration `yaml:"max_range" default:"24h" doc:"Longest time range of one downloadable video."`
	MaxConcurrent int      `yaml:"max_concurrent" default:"2" doc:"Downloadable video jobs this node runs at once."`
	MaxAge        Duration `yaml:"max_age" default:"720h" doc:"Downloadable videos are removed (row, file, thumbnail, manifest and signature) this long after they are asked for, unless a legal hold covers them; 0 keeps them until removed."`
	// The bounds of what one user or client may ask for (docs/security.md).
	MaxRunningPerUser   int `yaml:"max_running_per_user" default:"2" doc:"Downloadable videos one user may have in the making at once; past it the API answers 429 naming this key. The operator is not bounded."`
	MaxRunningPerClient int `yaml:"max_running_per_client" default:"8" doc:"Downloadable videos the users of one client may have in the making at once; past it 429."`
	MaxPerUserHour      int `yaml:"max_per_user_hour" default:"20" doc:"Downloadable videos one user may ask for in any hour (removed ones count); past it 429."`
	MaxPerClientHour    int `yaml:"max_per_client_hour" default:"60" doc:"Downloadable videos the users of one client may ask for in any hour; past it 429."`
}

// validateRetentionExport checks the retention and export sections.
func (c *Config) validateRetentionExport(v *validator) {
	v.positive("retention.sweep_interval", c.Retention.SweepInterval)
	if c.Retention.CameraQuota < 0 || c.Retention.ClientQuota < 0 {
		v.add("retention.camera_quota", fmt.Errorf("%w: quotas are 0 or more bytes", ErrInvalidValue))
	}
	if c.Retention.EventKeepDays < 0 {
		v.add("retention.event_keep_days", fmt.Errorf("%w %d (want 0 or more)", ErrInvalidValue, c.Retention.EventKeepDays))
	}
	v.positive("export.max_range", c.Export.MaxRange)
	if c.Export.MaxConcurrent < 1 {
		v.add("export.max_concurrent", fmt.Errorf("%w %d (want 1 or more)", ErrInvalidValue, c.Export.MaxConcurrent))
	}
	if c.Export.MaxAge < 0 {
		v.add("export.max_age", fmt.Errorf("%w %s (want 0 or more)", ErrInvalidValue, c.Export.MaxAge))
	}
	for _, b := range []struct {
		key string
		n   int
	}{{"export.max_running_per_user", c.Export.MaxRunningPerUser}, {"export.max_running_per_client", c.Export.MaxRunningPerClient},
		{"export.max_per_user_hour", c.Export.MaxPerUserHour}, {"export.max_per_client_hour", c.Export.MaxPerClientHour}} {
		if b.n < 1 {
			v.add(b.key, fmt.Errorf("%w %d (want 1 or more)", ErrInvalidValue, b.n))
		}
	}
}
