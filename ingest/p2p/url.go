package p2p

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/vigia/vigia/ingest"
)

var serialPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Target is what identifies a P2P camera.
type Target struct {
	// Serial number of the camera.
	Serial string

	// User, empty for the resolver's default.
	User string

	// Password of the camera (never log it).
	Password string

	// Stream is "0" (main) or "1" (secondary).
	Stream string
}

// URL returns the Vigia URL of a P2P camera:
// p2p://:{password}@{serial}/{stream}.
func URL(serial, password, stream string) string {
	if stream == "" {
		stream = "0"
	}
	u := url.URL{Scheme: "p2p", User: url.UserPassword("", password), Host: serial, Path: "/" + stream}
	return u.String()
}

// ParseURL parses p2p://[user]:{password}@{serial}/{stream}; the stream
// defaults to "0".
func ParseURL(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "p2p") {
		return Target{}, ingest.Permanent(ingest.ReasonBadURL, fmt.Errorf("not a p2p url"))
	}
	t := Target{Serial: u.Host, Stream: strings.Trim(u.Path, "/")}
	if u.User != nil {
		t.User = u.User.Username()
		t.Password, _ = u.User.Password()
	}
	if !serialPattern.MatchString(t.Serial) {
		return t, ingest.Permanent(ingest.ReasonBadURL, ErrBadSerial)
	}
	if t.Stream == "" {
		t.Stream = "0"
	}
	if t.Stream != "0" && t.Stream != "1" {
		return t, ingest.Permanent(ingest.ReasonNotFound, fmt.Errorf("p2p stream %q (want 0 or 1)", t.Stream))
	}
	return t, nil
}
