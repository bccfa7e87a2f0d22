//go:build !linux

package bench

import (
	"net"

	"github.com/pion/transport/v5"
)

// newGROConn returns nil: only Linux takes runs of datagrams whole.
func newGROConn(*net.UDPConn) transport.UDPConn { return nil }
