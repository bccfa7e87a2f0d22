// Package connlimit bounds the connections a listener holds: in total and
// per source address, where an IPv6 address counts by its /64 (what one
// subscriber is usually given). The push RTMP server counts its
// connections not yet authenticated per address with PerAddress; the
// node's HTTP server wraps its listener with Listener.
package connlimit
