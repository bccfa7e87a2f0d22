package app

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/vigia/vigia/config"
)

// ListenError is a listener of the node that could not start: the
// configuration key of its address, the value, and why. Its text is one
// line that names the key, the value and where to set it:
//
//	http.addr 127.0.0.1:8080: address already in use (set VIGIA_HTTP_ADDR or --http.addr)
type ListenError struct {
	// Key is the configuration key of the address (http.addr).
	Key string
	// Value is the address that was tried.
	Value string
	// Err is the error of the listen call.
	Err error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("%s %s: %s (set %s or --%s)", e.Key, e.Value, listenReason(e.Err), config.EnvName(e.Key), e.Key)
}

func (e *ListenError) Unwrap() error { return e.Err }

// listenReason is the operating system's words for a failed listen
// ("address already in use", "permission denied", "cannot assign requested
// address"), without the call around them.
func listenReason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var addrErr *net.AddrError
	if errors.As(err, &addrErr) {
		return addrErr.Err
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "host " + dnsErr.Name + " not found"
	}
	return err.Error()
}

// checkTCP reports a ListenError of key unless addr can be listened on now
// (TCP); the socket is closed again at once. It makes a listener that
// another component opens later (the embedded NATS server, which would
// otherwise retry for seconds) fail in one line first.
func checkTCP(key, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &ListenError{Key: key, Value: addr, Err: err}
	}
	return ln.Close()
}

// checkUDP is checkTCP for a UDP address.
func checkUDP(key, addr string) error {
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		return &ListenError{Key: key, Value: addr, Err: err}
	}
	return c.Close()
}
