package app

import (
	"context"
	"errors"
	"io"
	"net/http"

	"go.uber.org/zap"

	"github.com/vigia/vigia/live/transcode"
	"github.com/vigia/vigia/player"
)

// segmentH264 returns the H.264 rendition of a recorded segment (nil for
// one whose video is not H.265), for downloadable videos asked in H.264;
// nil in a build that cannot transcode.
func (a *App) segmentH264() func([]byte) ([]byte, error) {
	if !transcode.Available() {
		return nil
	}
	return h264Rendition
}

// h264Rendition transcodes a recorded H.265 segment to H.264; a segment
// in another codec gives nil (it plays as it is).
func h264Rendition(seg []byte) ([]byte, error) {
	out, err := transcode.Segment(seg, transcode.Options{})
	if errors.Is(err, transcode.ErrNotH265) {
		return nil, nil
	}
	return out, err
}

// renditions returns the handler of the H.264 renditions of recorded
// H.265 segments the API serves to players in browsers without H.265;
// nil in a build that cannot transcode.
func (a *App) renditions() http.Handler {
	if !transcode.Available() {
		return nil
	}
	return player.RenditionHandler(player.RenditionConfig{
		Open:      func(ctx context.Context, key string) (io.ReadCloser, error) { return a.store.Get(ctx, key, 0, -1) },
		Transcode: h264Rendition,
		Log:       a.log.With(zap.String("component", "renditions")),
	})
}
