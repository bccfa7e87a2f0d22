package synth

import (
	"context"
	"net"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest/rtmp/wire"
)

// RTMPServerConfig configures an RTMPServer.
type RTMPServerConfig struct {
	// Addr to listen on. It defaults to "127.0.0.1:0".
	Addr string

	// Streams served, by RTMPStreamSpec.Name.
	Streams []RTMPStreamSpec

	// Log, optional.
	Log *zap.Logger
}

// RTMPServer is a synthetic RTMP camera that players pull from
// (rtmp://addr/live/{name}): each player gets the stream's clip from a
// keyframe, paced in real time. Unknown names get
// NetStream.Play.StreamNotFound.
type RTMPServer struct {
	cfg     RTMPServerConfig
	ln      net.Listener
	mu      sync.Mutex
	streams map[string]RTMPStreamSpec
	players map[string]map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// NewRTMPServer returns a server; Start listens.
func NewRTMPServer(cfg RTMPServerConfig) *RTMPServer {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	s := &RTMPServer{cfg: cfg, streams: map[string]RTMPStreamSpec{}, players: map[string]map[net.Conn]struct{}{}}
	for _, st := range cfg.Streams {
		s.streams[st.Name] = st
	}
	return s
}

// Start listens and serves.
func (s *RTMPServer) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	s.ln = ln
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				nc.Close()
				return
			}
			s.wg.Add(1)
			s.mu.Unlock()
			go func() {
				defer s.wg.Done()
				defer nc.Close()
				s.serve(nc)
			}()
		}
	}()
	return nil
}

// Addr returns the listen address.
func (s *RTMPServer) Addr() string { return s.ln.Addr().String() }

// URL returns the URL of a stream.
func (s *RTMPServer) URL(name string) string { return "rtmp://" + s.Addr() + "/live/" + name }

// Drop disconnects the players of a stream now; the stream stays served.
func (s *RTMPServer) Drop(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.players[name] {
		c.Close()
	}
}

// Close stops the server and waits for its goroutines.
func (s *RTMPServer) Close() {
	s.mu.Lock()
	s.closed = true
	for _, m := range s.players {
		for c := range m {
			c.Close()
		}
	}
	s.mu.Unlock()
	if s.ln != nil {
		s.ln.Close()
	}
	s.wg.Wait()
}

func (s *RTMPServer) serve(nc net.Conn) {
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := wire.ServerHandshake(nc); err != nil {
		return
	}
	c := wire.NewConn(nc, wire.Limits{})
	for {
		m, err := c.ReadMessage()
		if err != nil {
			return
		}
		if m.Type != wire.TypeCommandAMF0 {
			continue
		}
		cmd, err := wire.ParseCommand(m)
		if err != nil {
			return
		}
		switch cmd.Name {
		case "connect":
			if c.Start(true) != nil {
				return
			}
			err = c.WriteCommand(0, "_result", cmd.TransactionID, wire.Object{{Name: "fmsVer", Value: "FMS/3,0,1,123"}},
				wire.Status("status", "NetConnection.Connect.Success", "Connection succeeded."))
		case "createStream":
			err = c.WriteCommand(0, "_result", cmd.TransactionID, nil, 1.0)
		case "play":
			name, _ := cmd.Arg(1).(string)
			name, _, _ = strings.Cut(name, "?")
			s.play(nc, c, m.StreamID, name)
			return
		}
		if err != nil {
			return
		}
	}
}

func (s *RTMPServer) play(nc net.Conn, c *wire.Conn, streamID uint32, name string) {
	s.mu.Lock()
	spec, ok := s.streams[name]
	if ok {
		if s.players[name] == nil {
			s.players[name] = map[net.Conn]struct{}{}
		}
		s.players[name][nc] = struct{}{}
	}
	s.mu.Unlock()
	if !ok {
		_ = c.WriteCommand(streamID, "onStatus", 0, nil, wire.Status("error", "NetStream.Play.StreamNotFound", "no such stream"))
		return
	}
	defer func() {
		s.mu.Lock()
		delete(s.players[name], nc)
		s.mu.Unlock()
	}()
	_ = nc.SetDeadline(time.Time{})
	if c.WriteUserControl(wire.EventStreamBegin, streamID) != nil ||
		c.WriteCommand(streamID, "onStatus", 0, nil, wire.Status("status", "NetStream.Play.Reset", "reset")) != nil ||
		c.WriteCommand(streamID, "onStatus", 0, nil, wire.Status("status", "NetStream.Play.Start", "playing")) != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Consume what the player sends; stop when it goes.
		for {
			if _, err := c.ReadMessage(); err != nil {
				cancel()
				return
			}
		}
	}()
	if err := feedRTMP(ctx, c, streamID, spec); err != nil {
		s.cfg.Log.Debug("rtmp player gone", zap.String("stream", name), zap.Error(err))
	}
	nc.Close()
}
