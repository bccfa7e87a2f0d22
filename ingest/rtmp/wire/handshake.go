package wire

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
)

// handshakeSize is the size of C1, C2, S1 and S2.
const handshakeSize = 1536

// version is the RTMP version byte (C0/S0): 3 is plain RTMP.
const version = 3

func handshakePacket() []byte {
	p := make([]byte, handshakeSize)
	// time (4 bytes) and zero (4 bytes) stay zero: a zero version tells
	// clients such as FFmpeg not to expect the digest of the complex
	// handshake.
	_, _ = rand.Read(p[8:])
	return p
}

// ServerHandshake runs the server side of the simple handshake on rw: it
// reads C0 and C1, writes S0, S1 and S2 (an echo of C1) and reads C2.
// Callers set deadlines on the connection.
func ServerHandshake(rw io.ReadWriter) error {
	c0c1 := make([]byte, 1+handshakeSize)
	if _, err := io.ReadFull(rw, c0c1); err != nil {
		return fmt.Errorf("%w: read c0c1: %w", ErrHandshake, err)
	}
	if c0c1[0] != version {
		return fmt.Errorf("%w: version %d", ErrHandshake, c0c1[0])
	}
	out := make([]byte, 0, 1+2*handshakeSize)
	out = append(out, version)
	out = append(out, handshakePacket()...)
	out = append(out, c0c1[1:]...)
	if _, err := rw.Write(out); err != nil {
		return fmt.Errorf("%w: write s0s1s2: %w", ErrHandshake, err)
	}
	if _, err := io.ReadFull(rw, c0c1[:handshakeSize]); err != nil {
		return fmt.Errorf("%w: read c2: %w", ErrHandshake, err)
	}
	return nil
}

// ClientHandshake runs the client side of the simple handshake on rw.
func ClientHandshake(rw io.ReadWriter) error {
	c1 := handshakePacket()
	binary.BigEndian.PutUint32(c1, 0)
	if _, err := rw.Write(append([]byte{version}, c1...)); err != nil {
		return fmt.Errorf("%w: write c0c1: %w", ErrHandshake, err)
	}
	s := make([]byte, 1+2*handshakeSize)
	if _, err := io.ReadFull(rw, s); err != nil {
		return fmt.Errorf("%w: read s0s1s2: %w", ErrHandshake, err)
	}
	if s[0] != version {
		return fmt.Errorf("%w: version %d", ErrHandshake, s[0])
	}
	if _, err := rw.Write(s[1 : 1+handshakeSize]); err != nil {
		return fmt.Errorf("%w: write c2: %w", ErrHandshake, err)
	}
	return nil
}
