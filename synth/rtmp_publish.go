package synth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/vigia/vigia/ingest/rtmp/wire"
)

// ErrRTMPRefused is returned by PublishRTMP when the server refuses the
// connection or the publish.
var ErrRTMPRefused = errors.New("rtmp publish refused")

// rtmpURL is rtmp://host[:port]/app/stream[?query], split.
type rtmpURL struct {
	host, app, stream, tcURL string
}

func parseRTMPURL(raw string) (rtmpURL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "rtmp" || u.Host == "" {
		return rtmpURL{}, fmt.Errorf("rtmp url %q: %w", raw, ErrBadSpec)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "1935")
	}
	app, stream, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if u.RawQuery != "" {
		stream += "?" + u.RawQuery
	}
	return rtmpURL{host: host, app: app, stream: stream, tcURL: "rtmp://" + host + "/" + app}, nil
}

// PublishRTMP connects to an RTMP server as an encoder would (connect,
// releaseStream, FCPublish, createStream, publish) and sends spec's stream
// in real time until ctx ends, the server closes the connection or
// refuses the publish (ErrRTMPRefused).
func PublishRTMP(ctx context.Context, rawURL string, spec RTMPStreamSpec) error {
	t, err := parseRTMPURL(rawURL)
	if err != nil {
		return err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", t.host)
	if err != nil {
		return err
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := wire.ClientHandshake(nc); err != nil {
		return err
	}
	c := wire.NewConn(nc, wire.Limits{})
	if err := c.Start(false); err != nil {
		return err
	}
	if err := c.WriteCommand(0, "connect", 1, wire.Object{
		{Name: "app", Value: t.app}, {Name: "type", Value: "nonprivate"},
		{Name: "flashVer", Value: "FMLE/3.0 (compatible; vigia-synth)"}, {Name: "tcUrl", Value: t.tcURL},
	}); err != nil {
		return err
	}
	if _, err := awaitResult(c, 1); err != nil {
		return err
	}
	name, _, _ := strings.Cut(t.stream, "?")
	for i, cmd := range []string{"releaseStream", "FCPublish"} {
		if err := c.WriteCommand(0, cmd, 2+i, nil, name); err != nil {
			return err
		}
	}
	if err := c.WriteCommand(0, "createStream", 4, nil); err != nil {
		return err
	}
	res, err := awaitResult(c, 4)
	if err != nil {
		return err
	}
	sid, _ := res.Arg(1).(float64)
	streamID := uint32(sid)
	if err := c.WriteCommand(streamID, "publish", 5, nil, t.stream, "live"); err != nil {
		return err
	}
	for {
		st, err := awaitResult(c, -1)
		if err != nil {
			return err
		}
		if st.StatusObject().String("code") == "NetStream.Publish.Start" {
			break
		}
	}
	_ = nc.SetDeadline(time.Time{})
	readErr := make(chan error, 1)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		// Read what the server sends (acknowledgements, pings) and stop the
		// stream when it closes the connection.
		for {
			m, err := c.ReadMessage()
			if err != nil {
				readErr <- err
				cancel()
				return
			}
			if m.Type == wire.TypeCommandAMF0 {
				if cmd, err := wire.ParseCommand(m); err == nil && cmd.StatusObject().String("level") == "error" {
					readErr <- fmt.Errorf("%w: %s", ErrRTMPRefused, cmd.StatusObject().String("description"))
					cancel()
					nc.Close()
					return
				}
			}
		}
	}()
	err = feedRTMP(fctx, c, streamID, spec)
	if ctx.Err() != nil {
		_ = c.WriteCommand(streamID, "FCUnpublish", 6, nil, name)
		_ = c.WriteCommand(streamID, "deleteStream", 7, nil, sid)
		return ctx.Err()
	}
	select {
	case rerr := <-readErr:
		return rerr
	default:
		return err
	}
}

// awaitResult reads until the _result of transaction tid (any onStatus
// when tid is negative); an _error or an error status is ErrRTMPRefused.
func awaitResult(c *wire.Conn, tid float64) (*wire.Command, error) {
	for {
		m, err := c.ReadMessage()
		if err != nil {
			return nil, err
		}
		if m.Type != wire.TypeCommandAMF0 {
			continue
		}
		cmd, err := wire.ParseCommand(m)
		if err != nil {
			return nil, err
		}
		info := cmd.StatusObject()
		switch {
		case cmd.Name == "_error" || info.String("level") == "error":
			return nil, fmt.Errorf("%w: %s %s", ErrRTMPRefused, info.String("code"), info.String("description"))
		case tid < 0 && cmd.Name == "onStatus":
			return cmd, nil
		case cmd.Name == "_result" && cmd.TransactionID == tid:
			return cmd, nil
		}
	}
}
