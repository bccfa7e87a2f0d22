package api

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // api.timezone works on hosts without zoneinfo

	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// Resolver resolves camera host names; *net.Resolver implements it.
type Resolver interface {
	// LookupNetIP returns the addresses of host.
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Server. DB, Store, Registry, Status and Secret are
// required; the other integrations are optional and their operations answer
// "not available" without them.
type Config struct {
	// DB is the database.
	DB *db.DB
	// Store is the object store of recordings, images and videos.
	Store storage.Store
	// Catalogue finds recordings in Store. It defaults to one with the
	// default longest segment; the wiring passes the node's, whose
	// longest segment follows recording.segment_duration.
	Catalogue *catalogue.Catalogue
	// Registry is the NATS camera registry.
	Registry Registry
	// Status reads camera status.
	Status StatusReader
	// Live gives live URLs; optional.
	Live LiveURLs
	// Snapshots takes snapshots now; optional.
	Snapshots Snapshotter
	// SnapshotAt finds the image at a time; optional (stored snapshots and
	// minute thumbnails are searched without it).
	SnapshotAt SnapshotFinder
	// Exporter runs downloadable video jobs; optional.
	Exporter Exporter
	// OnGap, optional, records a gap the API causes: blocking a client
	// records camera_blocked for each of its cameras (docs/recording.md,
	// Gaps). It must not block.
	OnGap func(status.Gap)

	// Keys sign digests and seal camera credentials (security.secret, with
	// its rotation); one of Keys and Secret is required.
	Keys *sign.Keys
	// Secret, when Keys is nil, is the cluster's shared secret the keys are
	// derived from (16 bytes or more).
	Secret []byte
	// OperatorTokens authorise the restricted operations.
	OperatorTokens []string
	// Info is the camera creation info (manufacturers, models, plans).
	Info CreationInfo

	// PublicURL is the base URL clients reach this node at.
	PublicURL string
	// RTMPURL is the base of the rtmp_url of RTMP cameras
	// (rtmp://host:port/app). When empty, PushURL gives the rtmp_url, and
	// without it the base is rtmp://{host of PublicURL}:1935/live.
	RTMPURL string
	// PushURL, optional, returns the rtmp_url of push camera id when
	// RTMPURL is empty: the wiring derives it from the address the RTMP
	// push server really listens on.
	PushURL func(camera string) string
	// SignedURLExpiry is the lifetime of the storage URLs handed out. It
	// defaults to 5 minutes.
	SignedURLExpiry time.Duration
	// LiveURLExpiry is the lifetime of the live URLs handed out. It
	// defaults to 2 minutes.
	LiveURLExpiry time.Duration
	// TrustedProxies are the reverse proxies whose X-Forwarded-For gives
	// the client address (ClientAddr).
	TrustedProxies []netip.Prefix
	// AllowPrivateNetworks accepts camera URLs on loopback, private and
	// link-local addresses.
	AllowPrivateNetworks bool
	// Resolver resolves camera host names. It defaults to net.DefaultResolver.
	Resolver Resolver
	// BodyLimit is the largest request body read. It defaults to 1 MiB.
	BodyLimit int64
	// DigestGrace is how long after midnight the previous day's digests stay
	// valid. It defaults to 1 hour; negative means none.
	DigestGrace time.Duration
	// Location is the time zone of the dates read and written. It defaults to UTC.
	Location *time.Location
	// MaxVideoDuration bounds downloadable videos. It defaults to 1 hour.
	MaxVideoDuration time.Duration
	// Videos bounds the downloadable videos each user and client asks
	// for, and their lifetime (video_bounds.go).
	Videos VideoLimits
	// Readers bounds what reading recordings costs (readers.go).
	Readers ReaderLimits
	// LoginAttempts token requests are allowed per client address within
	// LoginWindow, each counted when it starts and uncounted when it
	// succeeds; LoginAccountAttempts failed ones per e-mail address. They
	// default to 5, 20 and 15 minutes.
	LoginAttempts        int
	LoginAccountAttempts int
	LoginWindow          time.Duration
	// PasswordCost is the bcrypt cost. It defaults to bcrypt.DefaultCost.
	PasswordCost int
	// LPR configures the plate read ingress (docs/events.md).
	LPR LPRConfig
	// PublishEvent, optional, publishes an event the server received
	// itself (a plate read) on the events stream, after storing it.
	PublishEvent func(ctx context.Context, e EventIn) error

	// Now is the clock. It defaults to time.Now.
	Now func() time.Time
	// Log receives the server's logs. It defaults to a no-op logger.
	Log *zap.Logger
	// Renditions, optional, serves the H.264 renditions of H.265 segments
	// (player.RenditionHandler, camera in the path value "id", key and
	// part in the query) for the player in browsers without H.265
	// (player_h264.go). Nil: recorded H.265 plays only where the browser
	// decodes it.
	Renditions http.Handler
}

// Server serves the HTTP interface.
type Server struct {
	cfg      Config
	log      *zap.Logger
	keys     *sign.Keys
	loc      *time.Location
	operator [][sha256.Size]byte
	throttle *throttle
	dummy    []byte // bcrypt hash compared when an e-mail is unknown

	// untrustedXFF logs, once, that X-Forwarded-For came from a peer that
	// is not a trusted proxy.
	untrustedXFF sync.Once

	// regMu makes a camera's database write and registry write one step
	// for RepairRegistry, which re-reads the camera under it.
	regMu sync.Mutex

	// lprRate bounds each camera's plate reads.
	lprRate *lprLimiter
	// cp bounds the calls to NATS and keeps what the API shows while NATS
	// is down (controlplane.go).
	cp *controlPlane

	// readers lists recordings for the reading routes (readersCatalogue);
	// viewerRate bounds each viewer's listing requests.
	readers    *catalogue.Catalogue
	viewerRate *lprLimiter

	// videoMu makes counting a client's videos and recording a new one one
	// step on this node (video_bounds.go).
	videoMu sync.Mutex
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.DB == nil:
		return nil, fmt.Errorf("%w: DB is required", ErrConfig)
	case cfg.Store == nil:
		return nil, fmt.Errorf("%w: Store is required", ErrConfig)
	case cfg.Registry == nil || cfg.Status == nil:
		return nil, fmt.Errorf("%w: Registry and Status are required", ErrConfig)
	case cfg.Keys == nil && len(cfg.Secret) < sign.MinSecretLen:
		return nil, fmt.Errorf("%w: Secret must be 16 bytes or more", ErrConfig)
	}
	keys := cfg.Keys
	if keys == nil {
		var err error
		if keys, err = sign.New(cfg.Secret); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	if cfg.SignedURLExpiry <= 0 {
		cfg.SignedURLExpiry = 5 * time.Minute
	}
	if cfg.LiveURLExpiry <= 0 {
		cfg.LiveURLExpiry = 2 * time.Minute
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = 1 << 20
	}
	if cfg.DigestGrace == 0 {
		cfg.DigestGrace = time.Hour
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.MaxVideoDuration <= 0 {
		cfg.MaxVideoDuration = time.Hour
	}
	cfg.Videos.defaults()
	cfg.Readers.defaults()
	if cfg.LoginAttempts <= 0 {
		cfg.LoginAttempts = 5
	}
	if cfg.LoginAccountAttempts <= 0 {
		cfg.LoginAccountAttempts = 20
	}
	if cfg.LoginWindow <= 0 {
		cfg.LoginWindow = 15 * time.Minute
	}
	if cfg.PasswordCost == 0 {
		cfg.PasswordCost = bcrypt.DefaultCost
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Catalogue == nil {
		cfg.Catalogue = catalogue.New(catalogue.Config{Store: cfg.Store, Now: cfg.Now})
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if cfg.Info.Manufacturers == nil {
		cfg.Info = DefaultCreationInfo()
	}
	lprRate := newLPRLimiter(&cfg.LPR)
	cp := newControlPlane(cfg.Now)
	cfg.Status = guardedStatus{cp: cp, next: cfg.Status}
	cfg.Registry = guardedRegistry{cp: cp, next: cfg.Registry}
	if cfg.Live != nil {
		cfg.Live = guardedLive{cp: cp, next: cfg.Live}
	}
	s := &Server{cfg: cfg, log: cfg.Log, keys: keys, loc: cfg.Location, throttle: newThrottle(cfg.LoginWindow), cp: cp}
	s.lprRate = lprRate
	s.readers = readersCatalogue(cfg)
	// The plate read limiter is a token bucket per key; viewers get one of
	// their own.
	s.viewerRate = &lprLimiter{rate: cfg.Readers.Rate, burst: float64(cfg.Readers.Burst), buckets: map[string]*lprBucket{}}
	for _, t := range cfg.OperatorTokens {
		if t = strings.TrimSpace(t); t != "" {
			s.operator = append(s.operator, sha256.Sum256([]byte(t)))
		}
	}
	dummy, err := bcrypt.GenerateFromPassword([]byte("no such user"), cfg.PasswordCost)
	if err != nil {
		return nil, fmt.Errorf("%w: password cost: %w", ErrConfig, err)
	}
	s.dummy = dummy
	return s, nil
}

// Register mounts every route of Routes on mux.
func (s *Server) Register(mux *http.ServeMux) {
	for _, rt := range s.routes() {
		mux.Handle(rt.Method+" "+rt.Pattern, rt.handler)
	}
}

// Handler returns a mux serving the routes of the interface only.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	s.Register(mux)
	return mux
}

func (s *Server) now() time.Time { return s.cfg.Now() }
