package rtmp

import (
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/vigia/vigia/ingest"
)

// target is a parsed rtmp:// or rtmps:// URL.
type target struct {
	tls      bool
	host     string // host:port
	name     string // host without port, for TLS
	app      string
	stream   string // play path, with the query
	tcURL    string
	redacted string
}

// parseTarget splits rtmp://host[:port]/app/stream[?query]: the first path
// element is the application, the rest the stream name (FFmpeg and most
// servers read URLs this way). The query goes with the stream name, where
// servers look for tokens.
func parseTarget(raw string) (*target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, ingest.Permanent(ingest.ReasonBadURL, errors.New("url does not parse"))
	}
	t := &target{}
	switch strings.ToLower(u.Scheme) {
	case "rtmp":
	case "rtmps":
		t.tls = true
	default:
		return nil, ingest.Permanent(ingest.ReasonBadURL, ingest.ErrUnsupportedScheme)
	}
	if u.Hostname() == "" {
		return nil, ingest.Permanent(ingest.ReasonBadURL, errors.New("url has no host"))
	}
	port := u.Port()
	if port == "" {
		port = "1935"
		if t.tls {
			port = "443"
		}
	}
	t.name = u.Hostname()
	t.host = net.JoinHostPort(t.name, port)
	path := strings.TrimPrefix(u.EscapedPath(), "/")
	app, stream, _ := strings.Cut(path, "/")
	if app == "" || stream == "" {
		return nil, ingest.Permanent(ingest.ReasonNotFound, errors.New("url needs /app/stream"))
	}
	t.app, _ = url.PathUnescape(app)
	t.stream, _ = url.PathUnescape(stream)
	if u.RawQuery != "" {
		t.stream += "?" + u.RawQuery
	}
	t.tcURL = strings.ToLower(u.Scheme) + "://" + t.host + "/" + t.app
	t.redacted = strings.ToLower(u.Scheme) + "://" + t.host + "/" + t.app + "/…"
	return t, nil
}
