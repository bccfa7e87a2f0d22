package live

import (
	"net"

	"github.com/pion/transport/v5"
	"github.com/pion/transport/v5/stdnet"
)

// batchNet is the network of the node's ICE agents: the standard one,
// with each UDP socket a session opens (host and server-reflexive
// candidates) a batchConn. TURN relays' sockets are left alone: what
// goes through them is wrapped for the relay.
type batchNet struct {
	*stdnet.Net
	s *sendBatcher
}

var _ transport.Net = (*batchNet)(nil)

func newBatchNet(s *sendBatcher) (*batchNet, error) {
	n, err := stdnet.NewNet()
	if err != nil {
		return nil, err
	}
	return &batchNet{Net: n, s: s}, nil
}

// ListenUDP opens a session's UDP socket.
func (n *batchNet) ListenUDP(network string, laddr *net.UDPAddr) (transport.UDPConn, error) {
	c, err := net.ListenUDP(network, laddr)
	if err != nil {
		return nil, err
	}
	return n.s.wrap(c), nil
}

// Interfaces returns the machine's interfaces as they are now, as the
// agent's own network would (it is made for each session): an address
// that came up after the node started is offered.
func (n *batchNet) Interfaces() ([]*transport.Interface, error) {
	fresh, err := stdnet.NewNet()
	if err != nil {
		return nil, err
	}
	return fresh.Interfaces()
}

// InterfaceByIndex is Interfaces' interface of that index.
func (n *batchNet) InterfaceByIndex(index int) (*transport.Interface, error) {
	fresh, err := stdnet.NewNet()
	if err != nil {
		return nil, err
	}
	return fresh.InterfaceByIndex(index)
}

// InterfaceByName is Interfaces' interface of that name.
func (n *batchNet) InterfaceByName(name string) (*transport.Interface, error) {
	fresh, err := stdnet.NewNet()
	if err != nil {
		return nil, err
	}
	return fresh.InterfaceByName(name)
}
