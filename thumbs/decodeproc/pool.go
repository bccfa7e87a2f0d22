package decodeproc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/thumbs/decoder"
)

// Reasons a decoder process was killed and replaced
// (vigia_decoder_restarts_total{reason}).
const (
	// ReasonCrash: the process died during a request (a signal, an exit).
	ReasonCrash = "crash"
	// ReasonMemory: it died during a request, out of memory (its limit).
	ReasonMemory = "memory"
	// ReasonTimeout: it did not answer by the request's deadline.
	ReasonTimeout = "timeout"
	// ReasonProtocol: it answered something that does not parse.
	ReasonProtocol = "protocol"
	// ReasonCanceled: the request was canceled while it decoded.
	ReasonCanceled = "canceled"
	// ReasonExited: it had exited between requests.
	ReasonExited = "exited"
)

// Reasons lists the restart reasons.
var Reasons = []string{ReasonCrash, ReasonMemory, ReasonTimeout, ReasonProtocol, ReasonCanceled, ReasonExited}

// Pool runs decoder processes and sends them requests. It is safe for
// concurrent use; each process answers one request at a time.
type Pool struct {
	cfg       Config
	available bool

	// tokens holds one token per free slot; free holds the free slots,
	// the most recently used last: a request takes the last one, so that
	// requests one at a time keep using one warm process, and a second
	// process starts only when requests overlap (idle ones stop).
	tokens chan struct{}
	freeMu sync.Mutex
	free   []*slot
	closed chan struct{}
	once   sync.Once
	idle   chan struct{} // closed when stopIdle has exited

	mu        sync.Mutex
	live      map[*proc]struct{}
	exitedCPU time.Duration // CPU of the processes gone

	requests    atomic.Uint64
	restarts    sync.Map // reason → *atomic.Uint64
	startFails  atomic.Uint64
	seccompWarn sync.Once
}

// slot is one decoder process's place: the process (nil until started,
// or after it was killed) and the pause after a failed start.
type slot struct {
	p        *proc
	lastUsed time.Time // end of its process's last request
	retryAt  time.Time
	backoff  time.Duration
	startErr error
}

// Pause after a failed start: doubling from minBackoff up to maxBackoff.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
)

// New returns a Pool. No process starts before the first request.
// Without cgo, or without a Command, Available is false.
func New(cfg Config) *Pool {
	cfg = cfg.withDefaults()
	p := &Pool{
		cfg:       cfg,
		available: decoder.Available() && len(cfg.Command) > 0,
		tokens:    make(chan struct{}, cfg.Processes),
		closed:    make(chan struct{}),
		idle:      make(chan struct{}),
		live:      make(map[*proc]struct{}),
	}
	for _, r := range Reasons {
		p.restarts.Store(r, new(atomic.Uint64))
	}
	for range cfg.Processes {
		p.free = append(p.free, &slot{})
		p.tokens <- struct{}{}
	}
	if cfg.IdleTimeout > 0 && p.available {
		go p.stopIdle()
	} else {
		close(p.idle)
	}
	return p
}

// stopIdle stops the processes that have had no request for IdleTimeout,
// looking every half of it, until Close. It takes only free slots, so it
// never stops a process between a request and its answer.
func (p *Pool) stopIdle() {
	defer close(p.idle)
	t := time.NewTicker(p.cfg.IdleTimeout / 2)
	defer t.Stop()
	for {
		select {
		case <-p.closed:
			return
		case <-t.C:
		}
		for p.stopOneIdle() {
		}
	}
}

// stopOneIdle stops the least recently used free process idle for
// IdleTimeout, and reports whether there was one.
func (p *Pool) stopOneIdle() bool {
	select {
	case <-p.tokens:
	default:
		return false
	}
	defer func() { p.tokens <- struct{}{} }()
	p.freeMu.Lock()
	var s *slot
	for i, f := range p.free {
		if f.p != nil && time.Since(f.lastUsed) >= p.cfg.IdleTimeout {
			s = f
			p.free = append(p.free[:i], p.free[i+1:]...)
			break
		}
	}
	p.freeMu.Unlock()
	if s == nil {
		return false
	}
	p.cfg.Log.Debug("idle decoder process stopped", zap.Int("pid", s.p.pid()))
	p.drop(s.p)
	s.p = nil
	p.freeMu.Lock()
	p.free = append([]*slot{s}, p.free...) // the least preferred
	p.freeMu.Unlock()
	return true
}

// Available reports whether the Pool can decode: the binary was built
// with cgo and a Command is set.
func (p *Pool) Available() bool { return p != nil && p.available }

// Decode sends req to a free decoder process (waiting for one while ctx
// allows) and returns its result. A decoding error comes back as the
// thumbs/decoder sentinel it wraps; a process that failed during the
// request (crash, deadline, protocol) gives ErrProcess and is replaced.
func (p *Pool) Decode(ctx context.Context, req *Request) (*Result, error) {
	if !p.Available() {
		return nil, decoder.ErrUnavailable
	}
	if _, err := req.check(); err != nil {
		return nil, err
	}
	var res *Result
	err := p.do(ctx, func(w *bufio.Writer, id uint32) error { return writeRequest(w, id, req) },
		func(pr *proc, h header, payload []byte) error {
			if h.typ != frameResult {
				return fmt.Errorf("%w: frame type %d in reply to a decode request", ErrProtocol, h.typ)
			}
			r, err := parseResult(payload)
			if err != nil {
				return err
			}
			pr.cpu.Store(int64(r.cpu))
			res = r
			return nil
		})
	return res, err
}

// do runs one request on a free process: write sends it, read takes a
// reply that is not an error frame (an ErrProtocol from read kills the
// process).
func (p *Pool) do(ctx context.Context, write func(*bufio.Writer, uint32) error, read func(*proc, header, []byte) error) error {
	s, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	defer p.release(s)
	pr, err := p.ensure(s)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		// Ended while waiting: the process has not seen the request and
		// stays.
		return fmt.Errorf("waiting for a decoder process: %w", err)
	}
	h, payload, err := pr.call(ctx, p.cfg.Timeout, write)
	if err == nil {
		p.requests.Add(1)
		if err = read(pr, h, payload); err != nil && errors.Is(err, ErrProtocol) {
			pr.kill()
			err = &failure{ReasonProtocol, err}
		}
	} else if !errors.As(err, new(*failure)) {
		p.requests.Add(1) // an error frame: the process answered
	}
	var f *failure
	if errors.As(err, &f) {
		p.replace(s, f)
		return fmt.Errorf("%w: %s: %w", ErrProcess, f.reason, f.err)
	}
	return err
}

// acquire takes the most recently used free slot.
func (p *Pool) acquire(ctx context.Context) (*slot, error) {
	select {
	case <-p.closed:
		return nil, ErrClosed
	default:
	}
	select {
	case <-p.tokens:
	case <-p.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a decoder process: %w", ctx.Err())
	}
	p.freeMu.Lock()
	s := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.freeMu.Unlock()
	return s, nil
}

// release gives a slot back after a request.
func (p *Pool) release(s *slot) {
	s.lastUsed = time.Now()
	p.freeMu.Lock()
	p.free = append(p.free, s)
	p.freeMu.Unlock()
	p.tokens <- struct{}{}
}

// ensure returns the slot's process, starting one when there is none
// (unless a start failed less than the backoff ago).
func (p *Pool) ensure(s *slot) (*proc, error) {
	if s.p != nil && s.p.exited() {
		p.replace(s, &failure{ReasonExited, errors.New("exited between requests" + s.p.exitText())})
	}
	if s.p != nil {
		return s.p, nil
	}
	if now := time.Now(); now.Before(s.retryAt) {
		return nil, fmt.Errorf("%w (next try in %v)", s.startErr, s.retryAt.Sub(now).Round(time.Millisecond))
	}
	pr, err := startProc(p.cfg)
	if err == nil && !pr.hello.decoding {
		pr.kill()
		pr.close()
		err = fmt.Errorf("%w: %w: the decoder process's binary was built without cgo", ErrStart, decoder.ErrUnavailable)
	}
	if err != nil {
		p.startFails.Add(1)
		s.backoff = min(max(2*s.backoff, minBackoff), maxBackoff)
		s.retryAt, s.startErr = time.Now().Add(s.backoff), err
		p.cfg.Log.Warn("decoder process did not start", zap.Duration("retry_in", s.backoff), zap.Error(err))
		return nil, err
	}
	s.backoff, s.retryAt, s.startErr = 0, time.Time{}, nil
	p.mu.Lock()
	p.live[pr] = struct{}{}
	p.mu.Unlock()
	select {
	case <-p.closed: // Close may have missed it
		p.drop(pr)
		return nil, ErrClosed
	default:
	}
	if !pr.hello.seccomp {
		p.seccompWarn.Do(func() {
			p.cfg.Log.Warn("decoder processes run without a seccomp filter", zap.String("stderr", pr.stderr.String()))
		})
	}
	p.cfg.Log.Debug("decoder process started", zap.Int("pid", pr.pid()))
	s.p = pr
	return pr, nil
}

// replace kills the slot's process after a failure, counts and logs it;
// the next request starts another.
func (p *Pool) replace(s *slot, f *failure) {
	pr := s.p
	s.p = nil
	p.drop(pr)
	select {
	case <-p.closed: // shutting down: not a restart
		return
	default:
	}
	if c, ok := p.restarts.Load(f.reason); ok {
		c.(*atomic.Uint64).Add(1)
	}
	p.cfg.Log.Warn("decoder process killed; another starts at the next request",
		zap.String("reason", f.reason), zap.Int("pid", pr.pid()), zap.Error(f.err))
}

// drop kills pr, waits for it and keeps its CPU time.
func (p *Pool) drop(pr *proc) {
	pr.kill()
	pr.close()
	p.mu.Lock()
	delete(p.live, pr)
	p.exitedCPU += pr.cpuTime()
	p.mu.Unlock()
}

// Close kills the decoder processes (they keep no state) and waits for
// the requests in progress, which fail with ErrProcess or ErrClosed.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		close(p.closed)
		<-p.idle
		p.mu.Lock()
		for pr := range p.live {
			pr.kill()
		}
		p.mu.Unlock()
		for range cap(p.tokens) {
			<-p.tokens
		}
		for _, s := range p.free {
			if s.p != nil {
				p.drop(s.p)
				s.p = nil
			}
		}
	})
}

// Stats are a Pool's counters since it started.
type Stats struct {
	// Requests counts the requests a process answered (results and
	// errors it reported).
	Requests uint64
	// Restarts counts the processes killed and replaced, by reason
	// (Reasons).
	Restarts map[string]uint64
	// StartFailures counts processes that did not start.
	StartFailures uint64
	// Processes is the number of processes running.
	Processes int
	// PIDs are their process ids.
	PIDs []int
	// CPU is the CPU time of every decoder process, exited ones included
	// (a running one's as it reported with its last answer).
	CPU time.Duration
}

// Stats returns the counters.
func (p *Pool) Stats() Stats {
	st := Stats{Requests: p.requests.Load(), StartFailures: p.startFails.Load(), Restarts: make(map[string]uint64, len(Reasons))}
	for _, r := range Reasons {
		if c, ok := p.restarts.Load(r); ok {
			st.Restarts[r] = c.(*atomic.Uint64).Load()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st.CPU = p.exitedCPU
	for pr := range p.live {
		st.Processes++
		st.PIDs = append(st.PIDs, pr.pid())
		st.CPU += pr.cpuTime()
	}
	return st
}

// ResidentBytes returns the resident set of the running decoder
// processes together (Linux; 0 elsewhere).
func (p *Pool) ResidentBytes() int64 {
	var total int64
	for _, pid := range p.Stats().PIDs {
		if n, err := residentBytes(pid); err == nil {
			total += n
		}
	}
	return total
}

// TestOp is an operation only a process started with Config.TestOps
// performs, for tests of the pool and of what uses it.
type TestOp uint8

// Test operations.
const (
	// TestCrash makes the process abort during the request.
	TestCrash TestOp = testCrash
	// TestHang makes it never answer.
	TestHang TestOp = testHang
	// TestAlloc makes it allocate and touch arg bytes, then answer.
	TestAlloc TestOp = testAlloc
	// TestInspect makes it describe its sandbox ("name value" lines).
	TestInspect TestOp = testInspect
)

// Test runs a test operation on a free process and returns TestInspect's
// text. Failures are handled as for Decode.
func (p *Pool) Test(ctx context.Context, op TestOp, arg uint64) (string, error) {
	if !p.Available() {
		return "", decoder.ErrUnavailable
	}
	var text string
	err := p.do(ctx, func(w *bufio.Writer, id uint32) error {
		return writeFrame(w, frameTest, id, marshalTest(uint8(op), arg))
	}, func(_ *proc, h header, payload []byte) error {
		switch h.typ {
		case framePong:
		case frameInspect:
			text = sanitize(payload, true)
		default:
			return fmt.Errorf("%w: frame type %d in reply to a test operation", ErrProtocol, h.typ)
		}
		return nil
	})
	return text, err
}

// ping sends ballast bytes and reads a reply of size bytes: the cost of
// the pipes and the framing alone.
func (p *Pool) ping(ctx context.Context, ballast []byte, size int) error {
	if !p.Available() {
		return decoder.ErrUnavailable
	}
	return p.do(ctx, func(w *bufio.Writer, id uint32) error {
		return writeFrame(w, framePing, id, binary.BigEndian.AppendUint32(nil, uint32(size)), ballast)
	}, func(_ *proc, h header, payload []byte) error {
		if h.typ != framePong || len(payload) != size {
			return fmt.Errorf("%w: frame type %d of %d bytes in reply to a ping", ErrProtocol, h.typ, len(payload))
		}
		return nil
	})
}
