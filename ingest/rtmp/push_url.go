package rtmp

import (
	"net"
	"net/url"
	"strconv"
)

// DefaultPort is RTMP's port, put in push URLs whose address names none.
const DefaultPort = 1935

// PublicPush is where push cameras reach a node, as its push URLs name it.
type PublicPush struct {
	// Host is the host put in the URLs (rtmp.public_host).
	// It defaults to the host of PublicURL.
	Host string

	// PublicURL is the node's public address (http.public_url).
	PublicURL string

	// Addr is the push server's address (host:port); its port is put in
	// the URLs. A port of 0, or none, gives DefaultPort.
	Addr string
}

// URL returns the URL camera publishes to (PushURL) at p.
func (p PublicPush) URL(secret []byte, camera string) string {
	host := p.Host
	if host == "" {
		if u, err := url.Parse(p.PublicURL); err == nil {
			host = u.Hostname()
		}
	}
	_, ps, _ := net.SplitHostPort(p.Addr)
	port, err := strconv.Atoi(ps)
	if err != nil || port == 0 {
		port = DefaultPort
	}
	return PushURL(host, port, secret, camera)
}
