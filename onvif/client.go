package onvif

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Client talks to one ONVIF device. Its zero value is not usable: build it
// with NewClient. Methods may be called from several goroutines.
type Client struct {
	// DeviceURL is the device service address, e.g.
	// http://10.0.0.5/onvif/device_service.
	DeviceURL string
	// User and Password authenticate requests; with an empty User requests
	// are sent without authentication.
	User, Password string
	// HTTP sends the requests. It defaults to a client without redirects.
	HTTP *http.Client
	// Timeout bounds each request. It defaults to DefaultTimeout.
	Timeout time.Duration
	// Now is the local clock. It defaults to time.Now.
	Now func() time.Time

	mu       sync.Mutex
	offset   time.Duration // camera clock minus local clock
	synced   bool          // offset measured by Sync
	services Services
	// useMedia2: the device advertised Media2 and no Media service.
	useMedia2 bool
	nc        int // digest nonce count
	chal      *challenge
}

// NewClient returns a client for the device service at deviceURL.
func NewClient(deviceURL, user, password string) *Client {
	return &Client{DeviceURL: deviceURL, User: user, Password: password}
}

// SetClockOffset sets the camera clock minus the local clock, used for the
// Created time of UsernameTokens. Sync measures it.
func (c *Client) SetClockOffset(d time.Duration) {
	c.mu.Lock()
	c.offset = d
	c.mu.Unlock()
}

// ClockOffset returns the offset set by Sync or SetClockOffset.
func (c *Client) ClockOffset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return noRedirect
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// call sends body (one operation element) to endpoint and returns the
// parsed response envelope. Authenticated calls carry a UsernameToken; a
// 401 with a Digest challenge is answered once with HTTP digest (keeping
// the UsernameToken, which cameras requiring both accept).
func (c *Client) call(ctx context.Context, endpoint, action, body string, auth bool) (*Envelope, error) {
	return c.callWith(ctx, endpoint, action, body, callOpts{auth: auth})
}

// callOpts are the less common options of a call.
type callOpts struct {
	// auth adds a UsernameToken (and digest on 401).
	auth bool
	// header is added to the SOAP header verbatim (WS-Addressing).
	header string
	// extra is added to the request's deadline (a PullMessages wait).
	extra time.Duration
}

func (c *Client) callWith(ctx context.Context, endpoint, action, body string, o callOpts) (*Envelope, error) {
	auth := o.auth
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+o.extra)
	defer cancel()
	header := o.header
	if auth && c.User != "" {
		nonce := make([]byte, 16)
		_, _ = rand.Read(nonce)
		header += usernameToken(c.User, c.Password, nonce, c.now().Add(c.ClockOffset()))
	}
	payload := buildEnvelope(header, body)
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("onvif: endpoint: %w", err)
	}
	c.mu.Lock()
	chal := c.chal
	c.mu.Unlock()
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
		if err != nil {
			return nil, fmt.Errorf("onvif: %w", err)
		}
		req.Header.Set("Content-Type", `application/soap+xml; charset=utf-8; action="`+action+`"`)
		if auth && c.User != "" && chal != nil {
			c.mu.Lock()
			c.nc++
			nc := c.nc
			c.mu.Unlock()
			cb := make([]byte, 8)
			_, _ = rand.Read(cb)
			a, err := chal.authorization(c.User, c.Password, http.MethodPost, u.RequestURI(), nc, hex.EncodeToString(cb))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", a)
		}
		resp, err := c.httpClient().Do(req)
		if err != nil {
			return nil, fmt.Errorf("onvif: %s: %w", action, err)
		}
		data, rerr := readBounded(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			if nc, ok := parseChallenge(resp.Header.Get("WWW-Authenticate")); ok && auth && c.User != "" && attempt == 0 {
				chal = &nc
				c.mu.Lock()
				c.chal, c.nc = chal, 0
				c.mu.Unlock()
				continue
			}
			return nil, fmt.Errorf("%s: http 401: %w", action, ErrUnauthorized)
		}
		if rerr != nil {
			return nil, fmt.Errorf("onvif: %s: %w", action, rerr)
		}
		env, err := ParseEnvelope(data)
		if err != nil {
			var f *Fault
			if errors.As(err, &f) {
				f.HTTPStatus = resp.StatusCode
			}
			return env, fmt.Errorf("%s: %w", action, err)
		}
		if resp.StatusCode/100 != 2 {
			return env, fmt.Errorf("%s: %w: http %d", action, ErrMalformed, resp.StatusCode)
		}
		return env, nil
	}
}

// readBounded reads r up to MaxResponseBytes.
func readBounded(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxResponseBytes {
		return nil, ErrResponseTooLarge
	}
	return data, nil
}
