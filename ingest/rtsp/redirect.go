package rtsp

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/bluenviron/gortsplib/v4/pkg/base"

	"github.com/vigia/vigia/ingest"
)

// maxDials bounds the connections of one attempt: the first, up to five
// redirects, and the switch from UDP to TCP of the auto transport.
const maxDials = 7

// dialFunc is the DialContext of a gortsplib client.
type dialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// redirectGuard wraps the dial guard of one connection attempt. gortsplib
// follows DESCRIBE redirects (3xx with a Location) by dialling the new host
// and copying the URL's user and password to it; so when the camera URL
// carries credentials, a dial to any host:port other than the camera's own
// is refused (ERRO PERMANENTE, "address not allowed"). Every dial, the
// first and the redirected ones, goes through the address guard, and at most
// maxDials are made.
type redirectGuard struct {
	home  string // host:port of the camera URL, lower case
	creds bool
	dial  dialFunc
	dials int
}

func newRedirectGuard(u *base.URL, dial dialFunc) *redirectGuard {
	return &redirectGuard{home: canonicalAddr(u), creds: u.User != nil, dial: dial}
}

// canonicalAddr is the host:port gortsplib dials for u.
func canonicalAddr(u *base.URL) string {
	port := u.Port()
	if port == "" {
		port = "554"
		if u.Scheme == "rtsps" {
			port = "322"
		}
	}
	return strings.ToLower(net.JoinHostPort(u.Hostname(), port))
}

// DialContext is the client's dialer.
func (g *redirectGuard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	g.dials++
	if g.dials > maxDials {
		return nil, ErrTooManyRedirects
	}
	if g.creds && strings.ToLower(address) != g.home {
		return nil, ingest.Permanent(ingest.ReasonForbidden, fmt.Errorf("%w (%s)", ErrRedirectHost, address))
	}
	return g.dial(ctx, network, address)
}
