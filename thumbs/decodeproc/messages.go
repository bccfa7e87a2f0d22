package decodeproc

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/vigia/vigia/thumbs/decoder"
)

// hello is what a decoder process says once it is ready: what it can do
// and the limits it runs under.
type hello struct {
	decoding bool  // built with a decoder (cgo)
	seccomp  bool  // its seccomp filter is loaded
	testOps  bool  // it accepts test operations
	memory   int64 // its RLIMIT_DATA, bytes (0: none)
}

// The payload of a hello frame: u8 flags (1 decoding, 2 seccomp, 4 test
// operations), u64 memory limit.
const (
	helloDecoding = 1 << 0
	helloSeccomp  = 1 << 1
	helloTestOps  = 1 << 2
	helloKnown    = helloDecoding | helloSeccomp | helloTestOps
)

func marshalHello(h hello) []byte {
	var flags uint8
	if h.decoding {
		flags |= helloDecoding
	}
	if h.seccomp {
		flags |= helloSeccomp
	}
	if h.testOps {
		flags |= helloTestOps
	}
	return binary.BigEndian.AppendUint64([]byte{flags}, uint64(h.memory))
}

func parseHello(payload []byte) (hello, error) {
	p := parser{b: payload}
	flags := p.u8()
	mem := p.u64()
	if flags&^helloKnown != 0 {
		p.fail("unknown hello flags %#x", flags)
	}
	if mem > 1<<62 {
		p.fail("memory limit %d", mem)
	}
	if err := p.end(); err != nil {
		return hello{}, err
	}
	return hello{decoding: flags&helloDecoding != 0, seccomp: flags&helloSeccomp != 0,
		testOps: flags&helloTestOps != 0, memory: int64(mem)}, nil
}

// Error codes of an error frame: which sentinel the parent wraps.
const (
	codeOther       = 0
	codeBadRequest  = 1
	codeCodec       = 2
	codeDecode      = 3
	codeNoPicture   = 4
	codeScale       = 5
	codeUnavailable = 6
	codeTooLarge    = 7
	codeTestOps     = 8
	codeLast        = codeTestOps
)

// codeErrors are the sentinels of the codes, in order.
var codeErrors = [...]error{
	codeBadRequest:  ErrBadRequest,
	codeCodec:       decoder.ErrCodec,
	codeDecode:      decoder.ErrDecode,
	codeNoPicture:   decoder.ErrNoPicture,
	codeScale:       decoder.ErrScale,
	codeUnavailable: decoder.ErrUnavailable,
	codeTooLarge:    ErrTooLarge,
	codeTestOps:     ErrTestOps,
}

// errorCode returns the code of err.
func errorCode(err error) uint8 {
	for code, sentinel := range codeErrors {
		if sentinel != nil && errors.Is(err, sentinel) {
			return uint8(code)
		}
	}
	return codeOther
}

// The payload of an error frame: u8 code, u64 cpu (the process's CPU time
// so far, ns), u16 size, then the message (at most maxMessage bytes).
func marshalError(err error, cpu time.Duration) []byte {
	msg := err.Error()
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	b := []byte{errorCode(err)}
	b = binary.BigEndian.AppendUint64(b, uint64(cpu))
	b = binary.BigEndian.AppendUint16(b, uint16(len(msg)))
	return append(b, msg...)
}

// remoteError is an error a decoder process reported: its message, and
// the sentinel of its code.
type remoteError struct {
	kind error
	msg  string
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.kind }

// parseError parses an error frame's payload into the error it reports
// (its text made printable: it comes from the child) and the process's
// CPU time.
func parseError(payload []byte) (error, time.Duration, error) {
	p := parser{b: payload}
	code := p.u8()
	cpu := time.Duration(p.u64() & (1<<63 - 1))
	n := int(p.u16())
	if n > maxMessage {
		p.fail("error message of %d bytes", n)
	}
	msg := p.bytes(n)
	if code > codeLast {
		p.fail("error code %d", code)
	}
	if err := p.end(); err != nil {
		return nil, 0, err
	}
	e := &remoteError{kind: errDecoderProcess, msg: printable(msg)}
	if code != codeOther {
		e.kind = codeErrors[code]
	}
	return e, cpu, nil
}

// errDecoderProcess is the kind of errors without a code.
var errDecoderProcess = errors.New("decoder process error")

// printable returns b with every byte outside printable ASCII replaced.
func printable(b []byte) string { return sanitize(b, false) }

// sanitize returns b with every byte outside printable ASCII (and, with
// lines, other than a newline) replaced by '?'.
func sanitize(b []byte, lines bool) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if (c < 0x20 || c > 0x7e) && !(lines && c == '\n') {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}

// Test operations (frameTest: u8 op, u64 argument), honoured only by a
// process started with --test-ops.
const (
	testCrash   = 1 // abort the process
	testHang    = 2 // never answer
	testAlloc   = 3 // allocate and touch argument bytes, then answer with a pong
	testInspect = 4 // answer with the process's sandbox (frameInspect)
)

func marshalTest(op uint8, arg uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{op}, arg)
}

func parseTest(payload []byte) (op uint8, arg uint64, err error) {
	p := parser{b: payload}
	op, arg = p.u8(), p.u64()
	if p.err == nil && (op < testCrash || op > testInspect) {
		p.fail("test operation %d", op)
	}
	return op, arg, p.end()
}

// parsePing returns the reply size a ping asks for (the rest of its
// payload is ballast, to measure sending).
func parsePing(payload []byte) (int, error) {
	p := parser{b: payload}
	n := int(p.u32())
	if p.err == nil && n > MaxPayload {
		p.fail("pong of %d bytes", n)
	}
	if p.err != nil {
		return 0, p.err
	}
	return n, nil
}
