package rtmp

import (
	"context"
	"errors"
	"fmt"
	"github.com/vigia/vigia/sign"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/connlimit"
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

	ErrorHandshake = "handshake"
	ErrorProtocol  = "protocol"
	ErrorMedia     = "media"
	ErrorTimeout   = "timeout"
	ErrorPanic     = "panic"
)

// Reasons a connection is closed by a limit, as passed to
// ServerConfig.OnRejected (labels of vigia_rejected_connections_total).
const (
	// RejectedMaxConnections: the server holds MaxConns connections.
	RejectedMaxConnections = connlimit.ReasonMaxConnections
	// RejectedPerAddress: the source address holds MaxPendingPerAddress
	// connections not yet authenticated.
	RejectedPerAddress = connlimit.ReasonPerAddress
	// RejectedPreAuthTimeout: no authenticated publish within AuthTimeout
	// of the connection (handshake included).
	RejectedPreAuthTimeout = "pre_auth_timeout"
	// RejectedPreAuthTooLarge: a message longer than PreAuth.MaxMessageSize
	// before authentication.
	RejectedPreAuthTooLarge = "pre_auth_message_too_large"
	// RejectedPreAuthStreams: more chunk streams than
	// PreAuth.MaxChunkStreams, or more than PreAuth.MaxBuffered in partly
	// received messages, before authentication.
	RejectedPreAuthStreams = "pre_auth_chunk_streams"
	// RejectedPreAuthBudget: the connections not yet authenticated hold
	// PreAuthBudget together.
	RejectedPreAuthBudget = "pre_auth_budget"
)

// RejectedReasons are the Rejected* reasons, for exporting each from 0.
var RejectedReasons = []string{RejectedMaxConnections, RejectedPerAddress, RejectedPreAuthTimeout,
	RejectedPreAuthTooLarge, RejectedPreAuthStreams, RejectedPreAuthBudget}

// Defaults of the limits before authentication (ServerConfig).
const (
	// DefaultAuthTimeout is the default AuthTimeout.
	DefaultAuthTimeout = 10 * time.Second
	// DefaultPreAuthMessage is the default PreAuth.MaxMessageSize: a
	// connect command with a long tcUrl and Enhanced RTMP's fourCcList is
	// under 1 KiB.
	DefaultPreAuthMessage = 8 << 10
	// DefaultPreAuthChunkStreams is the default PreAuth.MaxChunkStreams:
	// encoders use 2 (control) and 3 to 8 (commands) before publishing.
	DefaultPreAuthChunkStreams = 8
	// DefaultPreAuthBudget is the default PreAuthBudget: 512 connections
	// each holding its most (two messages of 8 KiB).
	DefaultPreAuthBudget = 8 << 20
	// DefaultMaxPendingPerAddress is the default MaxPendingPerAddress.
	DefaultMaxPendingPerAddress = 16
)

// ServerConfig configures a push Server.
type ServerConfig struct {
	// Addr is the listen address (rtmp.addr). It defaults to ":1935".
	Addr string

	// Keys checks the stream keys (security.secret, and during a rotation
	// security.previous_secret).
	Keys *sign.Keys

	// ReadTimeout closes an authenticated publisher that sends nothing for
	// this long. It defaults to 10 seconds.
	ReadTimeout time.Duration

	// AuthTimeout bounds the time from accepting a connection to its
	// publish being authenticated (stream key checked): the handshake and
	// every command before it, however the peer spaces its bytes. It
	// defaults to 10 seconds.
	AuthTimeout time.Duration

	// PreAuth caps what a connection not yet authenticated can make the
	// server allocate. Zero fields default to a message of
	// DefaultPreAuthMessage, DefaultPreAuthChunkStreams chunk streams and
	// two messages buffered. Its Budget is ignored (PreAuthBudget).
	PreAuth wire.Limits

	// PreAuthBudget caps the bytes of partly received messages held by all
	// connections not yet authenticated together. It defaults to 8 MiB.
	PreAuthBudget int64

	// MaxPendingPerAddress caps the connections not yet authenticated from
	// one source address (an IPv6 /64); publishers already authenticated
	// do not count. It defaults to 16.
	MaxPendingPerAddress int

	// Hold is how long a publisher with a valid key waits for its camera's
	// source to take it (the source may be in its reconnection backoff).
	// It defaults to 10 seconds.
	Hold time.Duration

	// Claim, optional, is called when a publisher with a valid key reaches
	// a node that does not record its camera: it makes this node record it
	// (the cluster takes the camera's lease here). The publisher then waits
	// up to Hold for the camera's source.
	Claim func(ctx context.Context, camera string) error

	// KeyGen, optional, returns the generation of camera's stream key
	// (camera.Config.PushKeyGen) from the camera registry. A key of another
	// generation is refused. When it fails, the generation last read for
	// the camera (0 if none) is used, so a camera reconnecting while the
	// registry is unreachable keeps recording. Without it every key is of
	// generation 0.
	KeyGen func(ctx context.Context, camera string) (int, error)

	// MaxConns caps the connections open at once, authenticated or not.
	// It defaults to 1024.
	MaxConns int

	// Limits cap what one authenticated connection can make the server
	// allocate (wire's defaults: 8 MiB messages, 32 chunk streams, 16 MiB
	// buffered).
	Limits wire.Limits

	// OnConnection is called for each accepted connection. Optional.
	OnConnection func()

	// OnRefused is called when a publisher is refused, with one of the
	// Refused* reasons. Optional.
	OnRefused func(reason string)

	// OnError is called when a connection is closed for bad input, with one
	// of the Error* reasons. Optional.
	OnError func(reason string)

	// OnRejected is called when a connection is closed by a limit (before
	// it authenticated, or at accept), with one of the Rejected* reasons.
	// Optional.
	OnRejected func(reason string)

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
	gens      map[string]int // key generations last read (KeyGen), those above 0
	conns     map[net.Conn]struct{}
	wg        sync.WaitGroup
	done      chan struct{}

	preAuth wire.Limits           // with the shared budget
	pending *connlimit.PerAddress // connections not yet authenticated
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
	if cfg.AuthTimeout <= 0 {
		cfg.AuthTimeout = DefaultAuthTimeout
	}
	if cfg.PreAuth.MaxMessageSize <= 0 {
		cfg.PreAuth.MaxMessageSize = DefaultPreAuthMessage
	}
	if cfg.PreAuth.MaxChunkStreams <= 0 {
		cfg.PreAuth.MaxChunkStreams = DefaultPreAuthChunkStreams
	}
	if cfg.PreAuthBudget <= 0 {
		cfg.PreAuthBudget = DefaultPreAuthBudget
	}
	if cfg.MaxPendingPerAddress <= 0 {
		cfg.MaxPendingPerAddress = DefaultMaxPendingPerAddress
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	preAuth := cfg.PreAuth
	preAuth.Budget = wire.NewBudget(cfg.PreAuthBudget)
	return &Server{cfg: cfg, slots: map[string]*slot{}, gens: map[string]int{}, conns: map[net.Conn]struct{}{}, done: make(chan struct{}),
		preAuth: preAuth, pending: connlimit.NewPerAddress(cfg.MaxPendingPerAddress)}
}

// PreAuthBuffered returns the bytes of partly received messages held now
// by the connections not yet authenticated.
func (s *Server) PreAuthBuffered() int64 { return s.preAuth.Budget.Used() }

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
		key := connlimit.Key(nc.RemoteAddr())
		s.mu.Lock()
		var reason string
		switch {
		case s.closed:
		case len(s.conns) >= s.cfg.MaxConns:
			reason = RejectedMaxConnections
		case !s.pending.Acquire(key):
			reason = RejectedPerAddress
		}
		if s.closed || reason != "" {
			s.mu.Unlock()
			if reason != "" {
				s.rejected(reason) // before the close: counted once the peer sees it
			}
			_ = nc.Close()
			continue
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serve(nc, key)
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

func (s *Server) rejected(reason string) {
	if s.cfg.OnRejected != nil {
		s.cfg.OnRejected(reason)
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
