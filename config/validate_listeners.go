package config

import "fmt"

// validateListeners checks the limits of the HTTP interface and the RTMP
// push server.
func (c *Config) validateListeners(v *validator) {
	v.positive("http.read_header_timeout", c.HTTP.ReadHeaderTimeout)
	v.positive("http.read_timeout", c.HTTP.ReadTimeout)
	v.positive("http.idle_timeout", c.HTTP.IdleTimeout)
	v.atLeast("http.max_connections", c.HTTP.MaxConnections, 1)
	v.atLeast("http.max_connections_per_address", c.HTTP.MaxConnectionsPerAddress, 0)
	v.atLeast("rtmp.max_connections", c.RTMP.MaxConnections, 1)
	v.atLeast("rtmp.max_pending_per_address", c.RTMP.MaxPendingPerAddress, 1)
	v.positive("rtmp.auth_timeout", c.RTMP.AuthTimeout)
	if c.RTMP.PreAuthMaxMessage <= 0 {
		v.add("rtmp.pre_auth_max_message", fmt.Errorf("%w %s (want more than 0)", ErrInvalidValue, c.RTMP.PreAuthMaxMessage))
	}
	if c.RTMP.PreAuthBudget < c.RTMP.PreAuthMaxMessage {
		v.add("rtmp.pre_auth_budget", fmt.Errorf("%w %s (want at least rtmp.pre_auth_max_message %s)",
			ErrInvalidValue, c.RTMP.PreAuthBudget, c.RTMP.PreAuthMaxMessage))
	}
}

func (v *validator) atLeast(key string, n, least int) {
	if n < least {
		v.add(key, fmt.Errorf("%w %d (want %d or more)", ErrInvalidValue, n, least))
	}
}
