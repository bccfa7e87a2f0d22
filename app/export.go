package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/export"
	"github.com/vigia/vigia/live/transcode"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/thumbs/decodeproc"
)

// exportThumbWidth is the width of a downloadable video's thumbnail.
const exportThumbWidth = 320

// startExport starts the downloadable video workers of this node.
func (a *App) startExport(ctx context.Context) error {
	if !a.cfg.Export.Enabled {
		return nil
	}
	var thumb func(context.Context, *export.Keyframe) ([]byte, error)
	if a.decoders.Available() {
		thumb = a.keyframeJPEG
	}
	s, err := export.Start(ctx, export.ServiceConfig{
		Bus:           a.bus,
		Store:         a.store,
		Catalogue:     a.cat,
		Node:          a.cfg.NodeID,
		MaxConcurrent: a.cfg.Export.MaxConcurrent,
		MaxRange:      time.Duration(a.cfg.Export.MaxRange),
		Thumbnail:     thumb,
		SignKey:       a.exportSignKey(),
		H264:          transcode.Rendition(),
		Log:           a.log.With(zap.String("component", "export")),
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	a.export = s
	return nil
}

// closeExport stops the workers; running jobs go back to the queue.
func (a *App) closeExport() {
	if a.export != nil {
		a.export.Close()
	}
}

// keyframeJPEG has a clip's first keyframe (with its parameter sets)
// decoded by a decoder process and encoded as the video's thumbnail.
func (a *App) keyframeJPEG(ctx context.Context, kf *export.Keyframe) ([]byte, error) {
	res, err := a.decoders.Decode(ctx, &decodeproc.Request{
		Codec: kf.Codec, Still: true, Units: [][][]byte{kf.Unit()},
		Image: decodeproc.JPEG, ImageWidth: exportThumbWidth, Quality: 80,
	})
	if err != nil {
		return nil, err
	}
	return res.JPEG, nil
}

// OpenStore opens the configured storage backend alone (for `vigia
// export`, which reads recordings without running a node). The fs backend
// gets no usable signed URLs: nothing is served.
func OpenStore(ctx context.Context, cfg *config.Config, log *zap.Logger) (storage.Store, error) {
	c := *cfg
	if c.HTTP.PublicURL == "" {
		c.HTTP.PublicURL = "http://127.0.0.1"
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	a := &App{cfg: &c, log: log, secret: secret}
	if err := a.openStorage(ctx); err != nil {
		return nil, err
	}
	return a.store, nil
}
