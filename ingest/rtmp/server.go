package rtmp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest/rtmp/wire"
)

// Reasons a publisher is refused or a connection closed, as passed to
// ServerConfig.OnRefused and OnError (metric labels).
const (
	RefusedBadKey      = "bad_key"
	RefusedNotRecorded = "not_recorded"
	RefusedBusy        = "busy"
	RefusedBadApp      = "bad_app"
	RefusedPlay        = "play"
	RefusedLimit       = "connection_limit"

	ErrorHandshake = "handshake"
	ErrorProtocol  = "protocol"
	ErrorMedia     = "media"
	ErrorTimeout   = "timeout"
	ErrorPanic     = "panic"
)

// ServerConfig configures a push Server.
type ServerConfig struct {
	// Addr is the listen address (rtmp.addr). It defaults to ":1935".
	Addr string

	// Secret derives the stream keys (security.secret).
	Secret []byte

	// ReadTimeout closes a publisher that sends nothing for this long, and
	// bounds the handshake and the commands before publishing. It defaults
	// to 10 seconds.
	ReadTimeout time.Duration

	// Hold is how long a publisher with a valid key waits for its camera's
	// source to take it (the source may be in its reconnection backoff).
	// It defaults to 10 seconds.
	Hold time.Duration

	// Claim, optional, is called when a publisher with a valid key reaches
	// a node that does not record its camera: it makes this node record it
	// (the cluster takes the camera's lease here). The publisher then waits
	// up to Hold for the camera's source.
	Claim func(ctx context.Context, camera string) error

	// MaxConns caps the connections open at once. It defaults to 1024.
	MaxConns int

	// Limits cap what one connection can make the server allocate.
	Limits wire.Limits

	// OnConnection is called for each accepted connection. Optional.
	OnConnection func()

	// OnRefused is called when a publisher is refused, with one of the
	// Refused* reasons. Optional.
	OnRefused func(reason string)

	// OnError is called when a connection is closed for bad input, with one
	// of the Error* reasons. Optional.
	OnError func(reason string)

	// OnDecodeError is called for media dropped without closing the
	// connection. Optional.
	OnDecodeError func(err error)

	// Log is the server's logger.
	Log *zap.Logger
}

// Server accepts RTMP publishers and hands each to the push source of its
// camera. It listens lazily: the first push source (or Listen) opens
// Addr, so nodes without push cameras hold no port.
type Server struct {
	cfg ServerConfig

	mu        sync.Mutex
	ln        net.Listener
	listenErr error
	closed    bool
	slots     map[string]*slot
	conns     map[net.Conn]struct{}
	wg        sync.WaitGroup
	done      chan struct{}
}

// NewServer returns a server; nothing listens until Listen.
func NewServer(cfg ServerConfig) *Server {
	if cfg.Addr == "" {
		cfg.Addr = ":1935"
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 10 * time.Second
	}
	if cfg.Hold <= 0 {
		cfg.Hold = 10 * time.Second
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 1024
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Server{cfg: cfg, slots: map[string]*slot{}, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
}

// Listen opens the listen address if it is not open yet. A failure is
// remembered and returned again, so a bad rtmp.addr shows in every push
// camera's status.
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	if s.ln != nil {
		return nil
	}
	if s.listenErr != nil {
		return s.listenErr
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		s.listenErr = fmt.Errorf("%w: rtmp.addr %s: %w", ErrNotListening, s.cfg.Addr, err)
		return s.listenErr
	}
	s.ln = ln
	s.cfg.Log.Info("rtmp push server listening", zap.String("addr", ln.Addr().String()))
	s.wg.Add(1)
	go s.accept(ln)
	return nil
}

// Addr returns the address listened on, "" before Listen.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops listening, closes every connection and waits for their
// goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	if s.ln != nil {
		_ = s.ln.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// accept runs until the listener closes.
func (s *Server) accept(ln net.Listener) {
	defer s.wg.Done()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return
		}
		delay = 0
		if s.cfg.OnConnection != nil {
			s.cfg.OnConnection()
		}
		s.mu.Lock()
		if s.closed || len(s.conns) >= s.cfg.MaxConns {
			closed := s.closed
			s.mu.Unlock()
			_ = nc.Close()
			if !closed {
				s.refused(RefusedLimit)
			}
			continue
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serve(nc)
			s.mu.Lock()
			delete(s.conns, nc)
			s.mu.Unlock()
		}()
	}
}

func (s *Server) refused(reason string) {
	if s.cfg.OnRefused != nil {
		s.cfg.OnRefused(reason)
	}
}

func (s *Server) failed(reason string) {
	if s.cfg.OnError != nil {
		s.cfg.OnError(reason)
	}
}

// slot is a push camera recorded on this node: the publishers of the
// camera are handed to its source through it.
type slot struct {
	owner   context.Context
	handoff chan *publisher // unbuffered: a publisher waits for a source
	current *publisher
}

// register makes camera a push camera of this node for the lifetime of
// ctx (the camera's, which outlives each run of its source).
func (s *Server) register(ctx context.Context, camera string) *slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl := s.slots[camera]
	if sl != nil && sl.owner == ctx {
		return sl
	}
	if sl == nil {
		sl = &slot{handoff: make(chan *publisher)}
		s.slots[camera] = sl
	}
	sl.owner = ctx
	context.AfterFunc(ctx, func() {
		s.mu.Lock()
		if s.slots[camera] != sl || sl.owner != ctx {
			s.mu.Unlock()
			return
		}
		delete(s.slots, camera)
		cur := sl.current
		s.mu.Unlock()
		if cur != nil {
			cur.end(context.Canceled)
		}
	})
	return sl
}
