package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// Resolve fills the derived values and makes paths absolute: node_id
// defaults to the host name, http.public_url to http://{http.addr}
// (localhost when the address has no host or an unspecified one), and empty
// storage.path, recording.spool_dir and nats.store_dir to storage, spool and
// nats under data_dir. Relative paths are resolved against the working
// directory. Resolve is idempotent.
func (c *Config) Resolve() error {
	if c.NodeID == "" {
		host, err := os.Hostname()
		if err != nil {
			return &KeyError{Key: "node_id", Err: fmt.Errorf("default to host name: %w", err)}
		}
		c.NodeID = host
	}
	if c.HTTP.PublicURL == "" && c.HTTP.Addr != "" {
		c.HTTP.PublicURL = "http://" + publicHostPort(c.HTTP.Addr)
	}
	if c.DataDir == "" {
		return nil // reported by Validate
	}
	paths := []struct {
		key  string
		p    *string
		base string
	}{
		{"data_dir", &c.DataDir, ""},
		{"storage.path", &c.Storage.Path, "storage"},
		{"recording.spool_dir", &c.Recording.SpoolDir, "spool"},
		{"nats.store_dir", &c.NATS.StoreDir, "nats"},
	}
	for _, p := range paths {
		if *p.p == "" {
			*p.p = filepath.Join(c.DataDir, p.base)
		}
		abs, err := filepath.Abs(*p.p)
		if err != nil {
			return &KeyError{Key: p.key, Err: fmt.Errorf("resolve path: %w", err)}
		}
		*p.p = abs
	}
	return nil
}

// publicHostPort replaces a missing or unspecified listen host by localhost.
func publicHostPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}
