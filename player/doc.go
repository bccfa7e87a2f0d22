// Package player serves the embeddable camera player page of the service's
// "Get camera player" operation: live playback (hls.js on the node's live
// playlist), recorded playback from a time with a delay, a timeline of
// 10 minutes, 1 hour or 24 hours with highlight ranges, speeds from 0.5x to
// 16x, and the recorded VOD playlists the page plays, written from the
// catalogue's listing (playlist.go).
//
// It does no authentication: the API checks the token or player_digest
// before calling Page, and signs the VOD address it passes in Params.
//
// NodePage is a node's own recordings page (GET /): its cameras' status,
// live stream and recordings of the last hours; who may see it is decided
// by the function it is given (api.PageAccess).
//
// hls.js comes from npm (package.json and package-lock.json here) and is
// embedded at build time from assets/, filled by "make deps-npm".
package player
