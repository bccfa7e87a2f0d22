package rtmp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtmp/wire"
)

// validCamera reports whether camera.ValidID accepts id.
func validCamera(id string) bool { return camera.ValidID(id) == nil }

// publisher is one accepted publishing connection.
type publisher struct {
	camera string
	nc     net.Conn
	sinkc  chan *demuxer // the source's demuxer, sent once taken

	once sync.Once
	err  error
	done chan struct{} // closed when the connection stopped delivering
}

// end records why the publisher ends (the first reason wins) and closes
// its connection.
func (p *publisher) end(err error) {
	p.once.Do(func() { p.err = err })
	_ = p.nc.Close()
}

// serve runs one connection: handshake, commands, then media if it
// publishes. Until its publish is authenticated the connection is held to
// the pre-authentication limits: one deadline AuthTimeout after accept,
// small messages drawn from the shared budget, a place among the pending
// connections of its address (key).
func (s *Server) serve(nc net.Conn, key string) {
	log := s.cfg.Log.With(zap.String("remote", nc.RemoteAddr().String()))
	pending := true
	var c *wire.Conn
	defer func() {
		if v := recover(); v != nil {
			log.Error("rtmp connection panicked, closed", zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			s.failed(ErrorPanic)
		}
		_ = nc.Close()
		if c != nil {
			c.Release()
		}
		if pending {
			s.pending.Release(key)
		}
	}()
	// authenticated lifts the pre-authentication limits once the stream
	// key is checked.
	authenticated := func() error {
		if err := c.SetLimits(s.cfg.Limits); err != nil {
			return err
		}
		s.pending.Release(key)
		pending = false
		// The publisher may wait Hold for its camera's source before it
		// reads again (media renews the deadline at each message).
		return nc.SetDeadline(time.Now().Add(s.cfg.Hold + s.cfg.ReadTimeout))
	}
	_ = nc.SetDeadline(time.Now().Add(s.cfg.AuthTimeout)) // not renewed by traffic
	if err := wire.ServerHandshake(nc); err != nil {
		s.closePreAuth(log, err, ErrorHandshake)
		return
	}
	c = wire.NewConn(nc, s.preAuth)
	var app, appQuery string
	for {
		m, err := c.ReadMessage()
		if err != nil {
			s.closePreAuth(log, err, ErrorProtocol)
			return
		}
		if m.Type != wire.TypeCommandAMF0 && m.Type != wire.TypeCommandAMF3 {
			continue
		}
		cmd, err := wire.ParseCommand(m)
		if err != nil {
			s.closePreAuth(log, err, ErrorProtocol)
			return
		}
		switch cmd.Name {
		case "connect":
			obj, _ := cmd.Arg(0).(wire.Object)
			app, appQuery, _ = strings.Cut(obj.String("app"), "?")
			app = strings.Trim(app, "/")
			if err := c.Start(true); err != nil {
				return
			}
			err = c.WriteCommand(0, "_result", cmd.TransactionID,
				wire.Object{{Name: "fmsVer", Value: "FMS/3,0,1,123"}, {Name: "capabilities", Value: 31.0}},
				append(wire.Status("status", "NetConnection.Connect.Success", "Connection succeeded."),
					wire.Property{Name: "objectEncoding", Value: 0.0}))
		case "releaseStream", "FCPublish":
			err = c.WriteCommand(0, "_result", cmd.TransactionID, nil, wire.Undefined{})
		case "createStream":
			err = c.WriteCommand(0, "_result", cmd.TransactionID, nil, 1.0)
		case "play":
			s.refused(RefusedPlay)
			_ = c.WriteCommand(m.StreamID, "onStatus", 0, nil,
				wire.Status("error", "NetStream.Play.Failed", "this server only accepts publishers"))
			return
		case "publish":
			name, _ := cmd.Arg(1).(string)
			s.publish(nc, c, log, app, appQuery, name, m.StreamID, authenticated)
			return
		}
		if err != nil {
			s.closePreAuth(log, err, ErrorProtocol)
			return
		}
	}
}

// closePreAuth counts and logs why a connection not yet authenticated was
// closed: a limit before authentication is a rejection, anything else
// goes to closeErr.
func (s *Server) closePreAuth(log *zap.Logger, err error, reason string) {
	var ne net.Error
	var rejected string
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		rejected = RejectedPreAuthTimeout
	case errors.Is(err, wire.ErrMessageTooLarge):
		rejected = RejectedPreAuthTooLarge
	case errors.Is(err, wire.ErrTooManyStreams):
		rejected = RejectedPreAuthStreams
	case errors.Is(err, wire.ErrBudget):
		rejected = RejectedPreAuthBudget
	default:
		s.closeErr(log, err, reason)
		return
	}
	s.rejected(rejected)
	log.Info("rtmp connection closed before authenticating", zap.String("reason", rejected), zap.Error(err))
}

// closeErr counts and logs why a connection was closed; a plain
// disconnection is not an error.
func (s *Server) closeErr(log *zap.Logger, err error, reason string) {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), errors.Is(err, io.ErrUnexpectedEOF) && reason != ErrorHandshake:
		return
	case errors.As(err, &ne) && ne.Timeout():
		reason = ErrorTimeout
	}
	s.failed(reason)
	log.Info("rtmp connection closed", zap.String("reason", reason), zap.Error(err))
}

// streamKey splits a publish name "camera?key=…" (or takes the key from
// the application's query, where some encoders put it).
func streamKey(name, appQuery string) (camera, key string) {
	camera, query, _ := strings.Cut(name, "?")
	q, _ := url.ParseQuery(query)
	key = q.Get("key")
	if key == "" {
		q, _ = url.ParseQuery(appQuery)
		key = q.Get("key")
	}
	return camera, key
}

func (s *Server) refuse(c *wire.Conn, log *zap.Logger, streamID uint32, reason, camera, why string) {
	s.refused(reason)
	if !validCamera(camera) {
		camera = "(invalid)"
	}
	log.Warn("rtmp publisher refused", zap.String("reason", reason), zap.String("camera", camera))
	_ = c.WriteCommand(streamID, "onStatus", 0, nil, wire.Status("error", "NetStream.Publish.BadName", why))
}

// publish authenticates a publish (application and stream key), calls
// authenticated, and hands the publisher to its camera's source.
func (s *Server) publish(nc net.Conn, c *wire.Conn, log *zap.Logger, app, appQuery, name string, streamID uint32, authenticated func() error) {
	camera, key := streamKey(name, appQuery)
	if app != App {
		s.refuse(c, log, streamID, RefusedBadApp, camera, "unknown application")
		return
	}
	if !validCamera(camera) || !s.checkKey(camera, key) {
		s.refuse(c, log, streamID, RefusedBadKey, camera, ErrBadKey.Error())
		return
	}
	log = log.With(zap.String("camera", camera))
	if err := authenticated(); err != nil {
		s.closeErr(log, err, ErrorProtocol)
		return
	}
	sl := s.claimSlot(camera, log)
	s.mu.Lock()
	if sl == nil || s.slots[camera] != sl {
		s.mu.Unlock()
		s.refuse(c, log, streamID, RefusedNotRecorded, camera, "camera not recorded on this node")
		return
	}
	p := &publisher{camera: camera, nc: nc, sinkc: make(chan *demuxer, 1), done: make(chan struct{})}
	old := sl.current
	sl.current = p
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if sl.current == p {
			sl.current = nil
		}
		s.mu.Unlock()
	}()
	if old != nil {
		log.Info("rtmp publisher replaces the previous one")
		old.end(ErrReplaced)
	}
	t := time.NewTimer(s.cfg.Hold)
	select {
	case sl.handoff <- p:
		t.Stop()
	case <-t.C:
		s.refuse(c, log, streamID, RefusedBusy, camera, "camera source busy, retry")
		return
	case <-s.done:
		t.Stop()
		return
	}
	d := <-p.sinkc
	err := s.media(nc, c, streamID, d)
	p.end(err)
	close(p.done)
	if p.err != nil && !errors.Is(p.err, ErrReplaced) && !errors.Is(p.err, ErrPublisherGone) {
		reason := ErrorProtocol
		if _, ok := ingest.IsPermanent(p.err); ok || errors.Is(p.err, wire.ErrFLV) {
			reason = ErrorMedia
		}
		s.closeErr(log, p.err, reason)
	}
}

// media acknowledges the publish and feeds the camera's demuxer until the
// publisher stops.
func (s *Server) media(nc net.Conn, c *wire.Conn, streamID uint32, d *demuxer) error {
	if err := c.WriteUserControl(wire.EventStreamBegin, streamID); err != nil {
		return err
	}
	if err := c.WriteCommand(streamID, "onStatus", 0, nil,
		wire.Status("status", "NetStream.Publish.Start", "publishing")); err != nil {
		return err
	}
	for {
		_ = nc.SetDeadline(time.Now().Add(s.cfg.ReadTimeout))
		m, err := c.ReadMessage()
		if err != nil {
			var ne net.Error
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				return ErrPublisherGone
			}
			if errors.As(err, &ne) && ne.Timeout() {
				return ingest.ErrReadTimeout
			}
			return err
		}
		switch m.Type {
		case wire.TypeCommandAMF0, wire.TypeCommandAMF3:
			cmd, err := wire.ParseCommand(m)
			if err != nil {
				return err
			}
			switch cmd.Name {
			case "FCUnpublish", "deleteStream", "closeStream":
				return ErrPublisherGone
			}
		case wire.TypeAudio, wire.TypeVideo, wire.TypeAggregate:
			if err := d.message(m); err != nil {
				return fmt.Errorf("camera media: %w", err)
			}
		}
	}
}

// claimSlot returns camera's slot, first asking the cluster to move the
// camera here (Claim) when this node does not record it yet.
func (s *Server) claimSlot(camera string, log *zap.Logger) *slot {
	s.mu.Lock()
	sl := s.slots[camera]
	s.mu.Unlock()
	if sl != nil || s.cfg.Claim == nil {
		return sl
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Hold)
	defer cancel()
	if err := s.cfg.Claim(ctx, camera); err != nil {
		log.Info("push camera not claimed for this node", zap.Error(err))
		return nil
	}
	for {
		s.mu.Lock()
		sl = s.slots[camera]
		s.mu.Unlock()
		if sl != nil {
			return sl
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.done:
			return nil
		case <-time.After(20 * time.Millisecond):
		}
	}
}
