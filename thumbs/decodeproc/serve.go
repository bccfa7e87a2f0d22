package decodeproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/vigia/vigia/thumbs/decoder"
)

// server is the decoder process's side of the protocol.
type server struct {
	hello hello
	dec   *decoders
}

// keepBuffer bounds the request buffer kept between requests; a larger
// one (a long GOP) is let go after its request.
const keepBuffer = 4 << 20

// idleAfter is how long a process waits for a request before it lets go
// of its decoders and hands the memory they held back to the system: a
// node's thumbnails come in a burst once a minute, so an idle process
// keeps only the Go runtime's few megabytes; opening a decoder again costs
// far less than decoding.
const idleAfter = 10 * time.Second

// inFrame is a frame read from the parent.
type inFrame struct {
	h       header
	payload []byte
	err     error
}

// serve says hello, then answers each request frame read from in on out
// until in ends (nil) or a frame cannot be read or written (the stream is
// out of step: the process exits and the parent starts another). Frames
// are read by a goroutine of their own, so that the process notices when
// it has been idle for idleAfter.
func (s *server) serve(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)
	if err := writeFrame(w, frameHello, 0, marshalHello(s.hello)); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	frames := make(chan inFrame)
	bufs := make(chan []byte, 1) // the buffer, back from an answered request
	quit := make(chan struct{})
	defer close(quit)
	bufs <- nil
	go func() { // exits after a read error, or when serve returns
		for {
			var buf []byte
			select {
			case buf = <-bufs:
			case <-quit:
				return
			}
			h, payload, err := readFrame(r, buf)
			select {
			case frames <- inFrame{h, payload, err}:
			case <-quit:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	idle := time.NewTimer(idleAfter)
	defer idle.Stop()
	for {
		var f inFrame
		select {
		case f = <-frames:
		case <-idle.C:
			s.dec.close()
			decoder.ReleaseMemory()
			debug.FreeOSMemory()
			continue
		}
		if errors.Is(f.err, io.EOF) {
			return nil
		}
		if f.err != nil {
			return fmt.Errorf("read request: %w", f.err)
		}
		if err := s.answer(w, f.h, f.payload); err != nil {
			return fmt.Errorf("answer request %d: %w", f.h.id, err)
		}
		buf := f.payload
		if cap(buf) > keepBuffer {
			buf = nil
			debug.FreeOSMemory()
		}
		bufs <- buf
		idle.Reset(idleAfter)
	}
}

// answer answers one request frame. A request that fails gets an error
// frame; only a failed write is returned.
func (s *server) answer(w *bufio.Writer, h header, payload []byte) error {
	switch h.typ {
	case frameDecode:
		req, err := parseRequest(payload)
		if err != nil {
			return s.fail(w, h.id, fmt.Errorf("%w: %w", ErrBadRequest, err))
		}
		cpu0 := processCPU()
		res, err := s.dec.decode(req)
		if err != nil {
			return s.fail(w, h.id, err)
		}
		res.cpu = processCPU()
		res.CPU = res.cpu - cpu0
		b, err := marshalResult(res)
		if err != nil {
			return s.fail(w, h.id, err)
		}
		return writeFrame(w, frameResult, h.id, b)
	case framePing:
		n, err := parsePing(payload)
		if err != nil {
			return s.fail(w, h.id, fmt.Errorf("%w: %w", ErrBadRequest, err))
		}
		return writeFrame(w, framePong, h.id, make([]byte, n))
	case frameTest:
		op, arg, err := parseTest(payload)
		switch {
		case err != nil:
			return s.fail(w, h.id, fmt.Errorf("%w: %w", ErrBadRequest, err))
		case !s.hello.testOps || testOps == nil:
			return s.fail(w, h.id, ErrTestOps)
		}
		return testOps(s, w, h.id, op, arg)
	}
	return s.fail(w, h.id, fmt.Errorf("%w: frame type %d is not a request", ErrBadRequest, h.typ))
}

// fail answers a request with err.
func (s *server) fail(w *bufio.Writer, id uint32, err error) error {
	return writeFrame(w, frameError, id, marshalError(err, processCPU()))
}
