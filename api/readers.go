package api

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/vigia/vigia/catalogue"
)

// ReaderLimits bounds what reading recordings costs the node and its
// store (docs/security.md, Readers' cost).
type ReaderLimits struct {
	// Rate and Burst bound the listing, timeline and playlist requests of
	// one viewer: a user, or a client address for the operator's player
	// links. They default to 10 per second and 60. The operator token is
	// not limited.
	Rate  float64
	Burst int
	// MaxTimelineRange and MaxPlaylistRange bound the range of one
	// timeline and one recorded playlist (400 past them). They default to
	// 7 days and 24 hours.
	MaxTimelineRange, MaxPlaylistRange time.Duration
	// ListingCache, when positive, bounds the past hours' listings kept
	// for timelines, playlists and recordings (catalogue.WithHourCache),
	// each used for ListingCacheTTL (default 5 minutes); 0 keeps none.
	ListingCache    int
	ListingCacheTTL time.Duration
}

func (l *ReaderLimits) defaults() {
	if l.Rate <= 0 {
		l.Rate = 10
	}
	if l.Burst <= 0 {
		l.Burst = 60
	}
	if l.MaxTimelineRange <= 0 {
		l.MaxTimelineRange = 7 * 24 * time.Hour
	}
	if l.MaxPlaylistRange <= 0 {
		l.MaxPlaylistRange = 24 * time.Hour
	}
	if l.ListingCacheTTL <= 0 {
		l.ListingCacheTTL = catalogue.DefaultHourCacheTTL
	}
}

// readersCatalogue is the catalogue the reading routes list through:
// cfg.Catalogue, keeping past hours' listings when ListingCache is set.
// Holds and exports list through cfg.Catalogue itself, never a kept
// listing.
func readersCatalogue(cfg Config) *catalogue.Catalogue {
	if cfg.Readers.ListingCache <= 0 {
		return cfg.Catalogue
	}
	return cfg.Catalogue.WithHourCache(cfg.Readers.ListingCache, cfg.Readers.ListingCacheTTL)
}

// viewerKey is the rate limit key of a caller: its user, none for the
// operator.
func viewerKey(p principal) string {
	if p.operator {
		return ""
	}
	return "u" + strconv.FormatInt(p.user.ID, 10)
}

// playerViewerKey is the rate limit key of a player request: the user its
// player_digest or token names, else (the operator's player links, seen
// by anyone who has the page) the client address, an IPv6 /64 as one.
func (s *Server) playerViewerKey(r *http.Request, a playerAuth) string {
	switch {
	case a.operator:
		return ""
	case a.viewer.id != 0:
		return "u" + strconv.FormatInt(a.viewer.id, 10)
	}
	return "a" + addrThrottleKey(s.clientAddr(r))
}

// limitViewer takes one request of viewer key ("" is not limited); past
// the viewer's rate it is 429 with Retry-After, naming the limit.
func (s *Server) limitViewer(key string) error {
	if key == "" {
		return nil
	}
	wait, ok := s.viewerRate.allow(key, s.now())
	if ok {
		return nil
	}
	l := s.cfg.Readers
	return &apiError{status: http.StatusTooManyRequests,
		msg:    fmt.Sprintf("too many listing requests from this viewer: %g per second, %d at once (api.viewer_rate, api.viewer_burst)", l.Rate, l.Burst),
		header: map[string]string{"Retry-After": strconv.Itoa(int(math.Ceil(wait.Seconds())))}}
}
