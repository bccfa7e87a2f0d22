package app

import (
	"context"
	"io"
	"net/http"

	"go.uber.org/zap"

	"github.com/vigia/vigia/live/transcode"
	"github.com/vigia/vigia/player"
)

// renditions returns the handler of the H.264 renditions of recorded
// H.265 segments the API serves to players in browsers without H.265;
// nil in a build that cannot transcode.
func (a *App) renditions() http.Handler {
	if !transcode.Available() {
		return nil
	}
	return player.RenditionHandler(player.RenditionConfig{
		Open:      func(ctx context.Context, key string) (io.ReadCloser, error) { return a.store.Get(ctx, key, 0, -1) },
		Transcode: transcode.Rendition(),
		Log:       a.log.With(zap.String("component", "renditions")),
	})
}
