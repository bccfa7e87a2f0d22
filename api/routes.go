package api

import (
	"net/http"

	"github.com/vigia/vigia/player"
)

// Route is one method and path pattern of the interface.
type Route struct {
	// Method is the HTTP method (GET also answers HEAD).
	Method string
	// Pattern is the net/http ServeMux path pattern.
	Pattern string

	handler http.Handler
}

// Routes lists the routes a Server registers, in the order of docs/api.md.
func Routes() []Route {
	var s Server
	out := s.routes()
	for i := range out {
		out[i].handler = nil
	}
	return out
}

// routes is the route table; each handler is bound to s.
func (s *Server) routes() []Route {
	low, up, list := shapeLower, shapeUpper, shapeLower
	r := func(method, pattern string, sh shape, h handlerFunc) Route {
		return Route{Method: method, Pattern: pattern, handler: s.wrap(sh, h)}
	}
	return []Route{
		r("POST", "/api/v1/clients", low, s.createClient),
		r("POST", "/api/v1/clients/{client_id}/users", low, s.createUser),
		r("GET", "/api/client/block/{token}/{document}", low, s.blockClient(true)),
		r("GET", "/api/client/unblock/{token}/{document}", low, s.blockClient(false)),
		r("GET", "/api/user/block/{token}/{id}", low, s.blockUser(true)),
		r("GET", "/api/user/unblock/{token}/{id}", low, s.blockUser(false)),
		r("POST", "/api/v1/auth/token", low, s.issueToken),
		r("GET", "/api/v1/cameras/create", low, s.creationInfo),
		r("POST", "/api/v1/cameras", low, s.createCamera),
		r("PUT", "/api/v1/cameras/{id}", low, s.updateCamera),
		r("POST", "/api/v1/cameras/{id}/push-key", low, s.rotatePushKey),
		r("GET", "/api/v1/events", list, s.listEvents),
		r("POST", "/api/v1/lpr/{id}/{key}", low, s.pushLPR),
		r("GET", "/api/v4/cameras", low, s.listCameras),
		r("GET", "/api/camera-player/{id}", low, s.getCamera),
		r("GET", "/api/camera/{id}/player", low, s.player),
		r("GET", "/api/camera/{id}/player/live-url", low, s.playerLiveURL),
		r("GET", "/api/camera/{id}/player/timeline", low, s.playerTimeline),
		r("GET", "/api/camera/{id}/player/thumbs", low, s.playerThumbs),
		r("GET", "/api/camera/{id}/player/videos", low, s.playerVideos),
		r("GET", "/api/camera/{id}/vod.m3u8", low, s.vod),
		r("GET", "/api/camera/{id}/segment/{file}", low, s.segment),
		r("GET", "/api/camera/{id}/segment-h264/{file}", low, s.segmentH264),
		{Method: "GET", Pattern: "/api/player/", handler: http.StripPrefix("/api/player", player.Assets())},
		r("GET", "/camera/{id}/recordings", up, s.recordings),
		r("GET", "/cameras/{id}/recordings/{$}", up, s.recordings),
		r("GET", "/api/camera/{id}/thumbs-hourly", low, s.thumbs(true)),
		r("GET", "/api/camera/{id}/thumbs-minutes", low, s.thumbs(false)),
		r("GET", "/api/camera/{id}/live-url", low, s.liveURL),
		r("POST", "/api/camera/{id}/live-url", low, s.liveURL),
		r("GET", "/api/cameras/{id}/live-url/{$}", low, s.liveURL),
		r("POST", "/api/cameras/{id}/live-url/{$}", low, s.liveURL),
		r("POST", "/v2/api/drives", low, s.createVideo),
		r("GET", "/v2/api/drives", low, s.listVideos),
		r("POST", "/v2/api/drives/delete/{id}", low, s.deleteVideo),
		r("GET", "/api/v1/cameras/{id}/print", low, s.snapshotGet),
		r("POST", "/api/v1/cameras/{id}/print", low, s.snapshotPost),
		r("GET", "/api/openapi.json", low, s.openAPI),
		r("GET", "/api/v1/keys/export.pub", low, s.exportPublicKey),
		r("POST", "/api/v1/holds", low, s.createHold),
		r("GET", "/api/v1/holds", low, s.listHolds),
		r("POST", "/api/v1/holds/{id}/lift", low, s.liftHold),
	}
}
