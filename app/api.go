package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api"
	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/export"
	"github.com/vigia/vigia/retention"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/thumbs"
)

// eventsDurable is the durable consumer API nodes share to store events.
const eventsDurable = "api-events"

// apiPart is the running HTTP interface of the service.
type apiPart struct {
	db         *db.DB
	srv        *api.Server
	stopEvents context.CancelFunc // stops the events consumer and the registry repair
	eventsDone chan struct{}
	repairDone chan struct{}
	retention  *retention.Sweeper // the database's cameras (app/retention.go)
}

// startAPI opens the database (migrations applied), builds the API server
// and starts storing events. Its routes are mounted by serveHTTP.
func (a *App) startAPI(ctx context.Context) error {
	cfg := a.cfg
	tokens, generated, err := loadOperatorToken(cfg.OperatorToken, cfg.DataDir)
	if err != nil {
		return err
	}
	a.generatedToken = generated
	a.opTokens = tokens
	d, err := db.Open(ctx, cfg.Database.URL, cfg.DataDir)
	if err != nil {
		return err
	}
	a.api = &apiPart{db: d}
	loc, err := time.LoadLocation(cfg.API.Timezone)
	if err != nil {
		return fmt.Errorf("api.timezone: %w", err)
	}
	srv, err := api.New(api.Config{
		DB: d, Store: a.store, Catalogue: a.cat, Registry: a.bus, Status: a.bus,
		Live:       apiLive{a},
		Snapshots:  apiSnapshots{a.bus},
		SnapshotAt: apiSnapshotAt{a},
		OnGap:      a.recordGap,
		Exporter:   a.countExports(apiExporter{jobs: export.NewJobs(a.bus, a.store, time.Duration(a.cfg.Export.MaxRange))}),
		Keys:       a.keys, OperatorTokens: tokens, Info: api.CreationInfoFrom(cfg.API),
		PublicURL: a.URL(), RTMPURL: cfg.API.RTMPURL, PushURL: a.PushURL, SignedURLExpiry: time.Duration(cfg.Storage.SignedURLExpiry),
		LiveURLExpiry: time.Duration(cfg.Security.LiveURLExpiry), TrustedProxies: a.trustedProxies(),
		AllowPrivateNetworks: cfg.Ingest.AllowPrivateNetworks, BodyLimit: int64(cfg.API.BodyLimit),
		DigestGrace: time.Duration(cfg.API.DigestGrace), Location: loc, MaxVideoDuration: time.Duration(cfg.API.MaxVideoDuration),
		Readers: api.ReaderLimits{Rate: cfg.API.ViewerRate, Burst: cfg.API.ViewerBurst, MaxTimelineRange: time.Duration(cfg.API.MaxTimelineRange),
			MaxPlaylistRange: time.Duration(cfg.API.MaxPlaylistRange), ListingCache: cfg.API.ListingCache, ListingCacheTTL: time.Duration(cfg.API.ListingCacheTTL)},
		Videos: api.VideoLimits{RunningPerUser: cfg.Export.MaxRunningPerUser, RunningPerClient: cfg.Export.MaxRunningPerClient,
			PerUserHour: cfg.Export.MaxPerUserHour, PerClientHour: cfg.Export.MaxPerClientHour, MaxAge: time.Duration(cfg.Export.MaxAge)},
		LoginAttempts: cfg.API.LoginAttempts, LoginAccountAttempts: cfg.API.LoginAccountAttempts,
		LoginWindow:  time.Duration(cfg.API.LoginWindow),
		LPR:          api.LPRConfig{BodyLimit: int64(cfg.API.LPRBodyLimit), Rate: cfg.API.LPRRate, Burst: cfg.API.LPRBurst},
		PublishEvent: a.publishAPIEvent,
		Log:          a.log.With(zap.String("component", "api")),
		Renditions:   a.renditions(),
	})
	if err != nil {
		return err
	}
	a.api.srv = srv
	if rep, err := srv.RepairRegistry(ctx); err != nil {
		a.log.Warn("camera registry not repaired at start; retried periodically", zap.Error(err))
	} else if rep.Put+rep.Removed > 0 {
		a.log.Info("camera registry repaired from the database", zap.Int("put", rep.Put), zap.Int("removed", rep.Removed))
	}
	if err := a.startDBRetention(d); err != nil {
		return err
	}
	evCtx, cancel := context.WithCancel(context.Background())
	a.api.stopEvents, a.api.eventsDone = cancel, make(chan struct{})
	a.api.repairDone = make(chan struct{})
	go func() { // exits when stopEvents is called (Close)
		defer close(a.api.repairDone)
		expired := make(chan struct{})
		go func() { defer close(expired); srv.RunVideoExpiry(evCtx, api.VideoExpiryInterval) }()
		srv.RunRegistryRepair(evCtx, api.RegistryRepairInterval)
		<-expired
	}()
	go func() { // exits when stopEvents is called (Close)
		defer close(a.api.eventsDone)
		a.bus.KeepConsumingEvents(evCtx, eventsDurable, func(ctx context.Context, e bus.Event) error {
			return srv.StoreEvent(ctx, api.EventIn{ID: e.ID, Camera: e.Camera, Type: e.Type, At: time.UnixMilli(e.AtMs), ImageKey: e.ImageKey,
				Plate: e.Plate, Confidence: e.Confidence})
		})
	}()
	return nil
}

// GeneratedOperatorToken returns the operator token generated under
// data_dir by this start (the first start without one configured), to be
// printed once; "" otherwise.
func (a *App) GeneratedOperatorToken() string { return a.generatedToken }

// closeAPI stops storing events and closes the database.
func (a *App) closeAPI() {
	if a.api == nil {
		return
	}
	if a.api.stopEvents != nil {
		a.api.stopEvents()
		<-a.api.eventsDone
		<-a.api.repairDone
	}
	if a.api.retention != nil {
		a.api.retention.Close()
	}
	if err := a.api.db.Close(); err != nil {
		a.log.Warn("close database", zap.Error(err))
	}
}

// loadOperatorToken returns the configured operator tokens (comma-separated),
// or the one kept under dataDir (sign.Kept), generating it on first use;
// generated is the new token when one was just made, to print once.
func loadOperatorToken(configured, dataDir string) (tokens []string, generated string, err error) {
	if configured != "" {
		return config.SplitList(configured), "", nil
	}
	t, made, err := sign.Kept(filepath.Join(dataDir, "operator_token"), "vgo_", 24)
	if err != nil {
		return nil, "", fmt.Errorf("operator token: %w", err)
	}
	if made {
		generated = t
	}
	return []string{t}, generated, nil
}

// apiLive signs a camera's live URL, valid until the expiry the API asks
// for, on the node recording it: this node when it does, else the node
// holding its lease (cluster.HolderLiveURL); none when no node records it.
type apiLive struct{ a *App }

func (l apiLive) LiveURLs(ctx context.Context, camera string, hls bool, exp time.Time) (string, string, error) {
	a := l.a
	if a.live != nil && a.rec != nil {
		if _, ok := a.rec.Status(camera); ok {
			return a.liveURL(a.URL(), camera, hls, exp), a.URL(), nil
		}
	}
	base := cluster.HolderLiveURL(ctx, a.bus.Bucket(bus.BucketAssign), a.bus.Bucket(bus.BucketNodes), camera)
	if base == "" {
		return "", "", nil
	}
	return a.liveURL(base, camera, hls, exp), base, nil
}

// apiSnapshots asks the node recording a camera for a snapshot over NATS
// (vigia.snapshot.{camera}, answered by thumbs.Service.Answer).
type apiSnapshots struct{ b *bus.Bus }

func (s apiSnapshots) TakeSnapshot(ctx context.Context, camera string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, thumbs.SnapshotTimeout)
	defer cancel()
	data, err := s.b.RequestSnapshot(ctx, camera)
	if err != nil {
		return "", err
	}
	return thumbs.SnapshotKey(data)
}

// apiExporter submits downloadable video jobs through the export package
// (JetStream work queue, state in the exports bucket).
type apiExporter struct {
	jobs *export.Jobs
}

func (e apiExporter) Submit(ctx context.Context, j api.Job) error {
	id, err := strconv.ParseInt(j.ID, 10, 64)
	if err != nil {
		return fmt.Errorf("export job: bad id %q", j.ID)
	}
	_, err = e.jobs.Submit(ctx, export.Job{ID: id, Camera: j.Camera, StartMs: j.StartMs, EndMs: j.EndMs, Description: j.Description, Codec: j.Codec})
	return err
}

func (e apiExporter) Remove(ctx context.Context, id string) error {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return fmt.Errorf("export job: bad id %q", id)
	}
	return e.jobs.Remove(ctx, n)
}

func (e apiExporter) State(ctx context.Context, id string) (api.JobState, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return api.JobState{}, fmt.Errorf("export state: bad id %q", id)
	}
	st, err := e.jobs.Get(ctx, n)
	if err != nil {
		return api.JobState{}, err
	}
	return api.JobState{Status: st.Status, Key: st.Key, Reason: st.Reason}, nil
}

// apiSnapshotAt decodes the recorded frame at a time, on this node, from
// storage (thumbs.SnapshotAt). Without a recording at that time, or
// without decoding (no cgo, no decoder process), the API falls back to
// the images stored.
type apiSnapshotAt struct{ a *App }

func (s apiSnapshotAt) SnapshotAt(ctx context.Context, camera string, ts time.Time) (string, error) {
	key, _, err := s.a.SnapshotAt(ctx, camera, ts)
	if errors.Is(err, catalogue.ErrNoRecording) || errors.Is(err, thumbs.ErrUnavailable) {
		return "", nil
	}
	return key, err
}
