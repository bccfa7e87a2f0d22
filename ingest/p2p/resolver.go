package p2p

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vigia/vigia/ingest"
)

// Resolver turns a P2P camera into the URL of its stream at a gateway.
type Resolver interface {
	// Resolve returns the stream URL (rtsp, rtsps, rtmp or rtmps) of camera
	// t. A wrong password or unknown serial is an *ingest.PermanentError.
	Resolve(ctx context.Context, camera string, t Target) (string, error)
}

// NewResolver builds the resolver of p2p.resolver: an http:// or https://
// URL is an HTTP lookup service, anything else a URL template with the
// placeholders {serial}, {user}, {password}, {stream} and {camera}.
// defaultUser replaces {user} for cameras without one.
func NewResolver(spec, defaultUser string, timeout time.Duration) (Resolver, error) {
	if spec == "" {
		return nil, ErrNoResolver
	}
	// A template does not parse as a URL ({ and } in the user
	// information), so only its scheme is read here.
	scheme, _, ok := strings.Cut(spec, "://")
	if !ok {
		return nil, fmt.Errorf("p2p.resolver: not a url")
	}
	switch scheme = strings.ToLower(scheme); scheme {
	case "http", "https":
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		return &Lookup{URL: spec, Client: &http.Client{Timeout: timeout}}, nil
	case "rtsp", "rtsps", "rtmp", "rtmps":
		return Template{Pattern: spec, DefaultUser: defaultUser}, nil
	}
	return nil, fmt.Errorf("p2p.resolver: scheme %q (want http(s) for a lookup, rtsp(s) or rtmp(s) for a template)", scheme)
}

// Template resolves by substitution into a URL pattern such as
// rtsp://{user}:{password}@gateway:8554/{serial}/{stream}. Values are
// escaped for the part of the URL they land in (user information or
// path); every byte but the unreserved characters is percent-encoded.
type Template struct {
	// Pattern is the URL template.
	Pattern string

	// DefaultUser is {user} for cameras without one.
	DefaultUser string
}

// Resolve implements Resolver.
func (t Template) Resolve(_ context.Context, camera string, tg Target) (string, error) {
	user := tg.User
	if user == "" {
		user = t.DefaultUser
	}
	r := strings.NewReplacer(
		"{serial}", escape(tg.Serial),
		"{user}", escape(user),
		"{password}", escape(tg.Password),
		"{stream}", escape(tg.Stream),
		"{camera}", escape(camera),
	)
	return r.Replace(t.Pattern), nil
}

// escape percent-encodes every byte but the unreserved characters of RFC
// 3986, so a value is safe in user information, path and query alike.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// maxLookupBody caps the lookup answer read.
const maxLookupBody = 64 << 10

// Lookup resolves by asking an HTTP service: a POST of
// {"camera","serial","user","password","stream"} as JSON, answered by
// {"url": "rtsp://…"} (200), 401 or 403 for a wrong password, 404 for an
// unknown serial; other answers are temporary failures.
type Lookup struct {
	// URL of the service.
	URL string

	// Client used for the requests.
	Client *http.Client
}

// lookupRequest is the body sent to a lookup service.
type lookupRequest struct {
	Camera   string `json:"camera"`
	Serial   string `json:"serial"`
	User     string `json:"user,omitempty"`
	Password string `json:"password"`
	Stream   string `json:"stream"`
}

// Resolve implements Resolver.
func (l *Lookup) Resolve(ctx context.Context, camera string, t Target) (string, error) {
	body, _ := json.Marshal(lookupRequest{Camera: camera, Serial: t.Serial, User: t.User, Password: t.Password, Stream: t.Stream})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.URL, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrLookup, err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := l.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrLookup, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxLookupBody+1))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrLookup, err)
	}
	return ParseLookupResponse(res.StatusCode, b)
}

// ParseLookupResponse reads a lookup service's answer.
func ParseLookupResponse(status int, body []byte) (string, error) {
	if len(body) > maxLookupBody {
		return "", fmt.Errorf("%w: answer longer than %d bytes", ErrLookup, maxLookupBody)
	}
	var ans struct {
		URL   string `json:"url"`
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &ans)
	msg := ans.Error
	if len(msg) > 200 {
		msg = msg[:200]
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "", ingest.Permanent(ingest.ReasonAuth, fmt.Errorf("%w: status %d %s", ErrLookup, status, msg))
	case status == http.StatusNotFound:
		return "", ingest.Permanent(ingest.ReasonNotFound, fmt.Errorf("%w: status %d %s", ErrLookup, status, msg))
	case status != http.StatusOK:
		return "", fmt.Errorf("%w: status %d %s", ErrLookup, status, msg)
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return "", fmt.Errorf("%w: answer is not json", ErrLookup)
	}
	u, err := url.Parse(ans.URL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%w: answer has no url", ErrLookup)
	}
	switch strings.ToLower(u.Scheme) {
	case "rtsp", "rtsps", "rtmp", "rtmps":
		return ans.URL, nil
	}
	return "", fmt.Errorf("%w: answer url scheme %q", ErrLookup, u.Scheme)
}
