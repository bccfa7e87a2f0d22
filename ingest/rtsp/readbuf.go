package rtsp

import (
	"bufio"
	"context"
	"net"
	"time"
)

// readBufferSize is the size of the buffer between the socket and the RTSP
// client's own 4 KiB reader: a camera sends a frame as a burst of RTP
// packets, and one read syscall then takes the whole burst instead of one
// packet or 4 KiB at a time.
const readBufferSize = 16 << 10

// bufferedConn is a net.Conn whose reads go through a larger buffer.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// withReadBuffer wraps the connections dial returns.
func withReadBuffer(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return &bufferedConn{Conn: c, r: bufio.NewReaderSize(c, readBufferSize)}, nil
	}
}

// timedConn notes when each read from the connection returned data: the
// packets parsed from that read's bytes arrived then, so the read loop
// asks the clock once per read rather than once per packet.
type timedConn struct {
	net.Conn
	at time.Time // the last read that returned data
}

func (c *timedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.at = time.Now()
	}
	return n, err
}
