// Package onvif is a small ONVIF client on the standard library: the device
// service (clock, identity, service addresses), the media service (profiles,
// stream and snapshot addresses) and the events service (PullPoint
// subscriptions), over SOAP 1.2 with WS-Security UsernameToken digest
// authentication and HTTP digest authentication as a fallback.
//
// Everything a camera sends is bounded (limits.go): responses are read up to
// MaxResponseBytes, parsed into a tree of at most maxNodes elements nested at
// most maxDepth deep, and each request has a deadline. Parsers never panic
// and match elements by local name only, since cameras change namespace
// prefixes from one message to the next.
//
// Notifications are turned into the service's event types by one table
// (topics.go, docs/events.md); Joiner joins a start and an end on the same
// source into one event with its duration.
package onvif
