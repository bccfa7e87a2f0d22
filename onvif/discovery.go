package onvif

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// WS-Discovery (ONVIF Core 7.3): a Probe for NetworkVideoTransmitters is
// sent over UDP to the multicast group, or to one address after another;
// cameras answer with ProbeMatches naming their device service addresses.

// DiscoveryPort is the WS-Discovery UDP port.
const DiscoveryPort = 3702

// DiscoveryGroup is the WS-Discovery IPv4 multicast group and port.
var DiscoveryGroup = netip.AddrPortFrom(netip.AddrFrom4([4]byte{239, 255, 255, 250}), DiscoveryPort)

// maxDatagram is the largest WS-Discovery answer read; longer ones are cut
// and fail to parse.
const maxDatagram = 64 << 10

// maxMatches bounds the ProbeMatch elements taken from one answer.
const maxMatches = 16

// ProbeMatch is a device that answered a Probe.
type ProbeMatch struct {
	// From is the address the answer came from.
	From netip.AddrPort
	// Endpoint is the device's stable id (usually urn:uuid:...).
	Endpoint string
	// Types are the device types (NetworkVideoTransmitter, ...), without
	// namespace prefixes.
	Types []string
	// Scopes are the device's scope URIs.
	Scopes []string
	// XAddrs are the device service addresses.
	XAddrs []string
}

// Scope returns the last path element of the scope under
// onvif://www.onvif.org/{kind}/ (kind "hardware" is the model, "name" the
// name the vendor gave it), unescaped; "" when there is none.
func (m ProbeMatch) Scope(kind string) string {
	prefix := "onvif://www.onvif.org/" + kind + "/"
	for _, s := range m.Scopes {
		if rest, ok := strings.CutPrefix(s, prefix); ok && rest != "" {
			if u, err := url.PathUnescape(rest); err == nil {
				return u
			}
			return rest
		}
	}
	return ""
}

// Host is the camera's address: the host of its first XAddr (where its
// device service is), else the address the answer came from.
func (m ProbeMatch) Host() string {
	for _, x := range m.XAddrs {
		if u, err := url.Parse(x); err == nil && u.Hostname() != "" {
			return u.Hostname()
		}
	}
	if m.From.IsValid() {
		return m.From.Addr().String()
	}
	return ""
}

// ProbeMessage returns a Probe for NetworkVideoTransmitters with the
// message id messageID (urn:uuid:...).
func ProbeMessage(messageID string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>` +
		`<s:Envelope xmlns:s="` + nsSOAP + `" xmlns:a="http://schemas.xmlsoap.org/ws/2004/08/addressing">` +
		`<s:Header><a:Action s:mustUnderstand="1">http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe</a:Action>` +
		`<a:MessageID>` + xmlEscape(messageID) + `</a:MessageID>` +
		`<a:ReplyTo><a:Address>http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous</a:Address></a:ReplyTo>` +
		`<a:To s:mustUnderstand="1">urn:schemas-xmlsoap-org:ws:2005:04:discovery</a:To></s:Header>` +
		`<s:Body><Probe xmlns="http://schemas.xmlsoap.org/ws/2005/04/discovery">` +
		`<d:Types xmlns:d="http://schemas.xmlsoap.org/ws/2005/04/discovery" xmlns:dp0="http://www.onvif.org/ver10/network/wsdl">dp0:NetworkVideoTransmitter</d:Types>` +
		`</Probe></s:Body></s:Envelope>`)
}

// ParseProbeMatches parses a ProbeMatches answer to the Probe of message
// id relatesTo ("" accepts any): its matches, at most maxMatches, each
// with at least one XAddr. It never panics and allocates in proportion to
// the bytes given.
func ParseProbeMatches(data []byte, relatesTo string) ([]ProbeMatch, error) {
	env, err := ParseEnvelope(data)
	if err != nil {
		return nil, err
	}
	if relatesTo != "" {
		if r := env.Header.Find("RelatesTo").Value(); r != relatesTo {
			return nil, fmt.Errorf("%w: ProbeMatches relates to %q, not to the probe", ErrMalformed, r)
		}
	}
	pm := env.Body.Child("ProbeMatches")
	if pm == nil {
		return nil, fmt.Errorf("%w: no ProbeMatches", ErrMalformed)
	}
	var out []ProbeMatch
	for _, n := range pm.All("ProbeMatch") {
		if len(out) == maxMatches {
			break
		}
		m := ProbeMatch{
			Endpoint: n.Path("EndpointReference", "Address").Value(),
			Scopes:   fields(n.Child("Scopes").Value()),
			XAddrs:   fields(n.Child("XAddrs").Value()),
		}
		for _, t := range fields(n.Child("Types").Value()) {
			if _, local, ok := strings.Cut(t, ":"); ok {
				t = local
			}
			m.Types = append(m.Types, t)
		}
		var xaddrs []string
		for _, x := range m.XAddrs {
			if u, err := url.Parse(x); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
				xaddrs = append(xaddrs, x)
			}
		}
		m.XAddrs = xaddrs
		if len(m.XAddrs) > 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// fields splits a space-separated list, keeping at most 32 items.
func fields(s string) []string {
	f := strings.Fields(s)
	if len(f) > 32 {
		f = f[:32]
	}
	return f
}

// Probe sends one Probe from conn to each of targets (the multicast group,
// or unicast addresses), pausing gap between two sends, and collects
// answers until ctx ends; each device (by Endpoint, else by address) is
// given once, in the order it answered. A nil allowed accepts every
// answer; otherwise answers from addresses it refuses are dropped.
func Probe(ctx context.Context, conn *net.UDPConn, targets []netip.AddrPort, gap time.Duration, allowed func(netip.Addr) bool) ([]ProbeMatch, error) {
	id := "urn:uuid:" + newUUID()
	msg := ProbeMessage(id)
	done := make(chan struct{})
	var sendErr error
	go func() {
		defer close(done)
		for i, t := range targets {
			if i > 0 && gap > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(gap):
				}
			}
			if _, err := conn.WriteToUDPAddrPort(msg, t); err != nil && len(targets) == 1 {
				sendErr = err
				_ = conn.SetReadDeadline(time.Now())
				return
			}
		}
	}()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
	defer stop()
	seen := map[string]bool{}
	var out []ProbeMatch
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			<-done
			if sendErr != nil {
				return out, sendErr
			}
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return out, nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return out, nil
			}
			return out, err
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if allowed != nil && !allowed(from.Addr()) {
			continue
		}
		ms, err := ParseProbeMatches(buf[:n], id)
		if err != nil {
			continue
		}
		for _, m := range ms {
			key := m.Endpoint
			if key == "" {
				key = from.String() + " " + strings.Join(m.XAddrs, " ")
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			m.From = from
			out = append(out, m)
		}
	}
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
