// Package p2p records P2P cameras: cameras known by a serial number and a
// password, reached through a gateway that speaks the vendor's P2P
// protocol and serves each camera as an ordinary stream. A Resolver turns
// serial, password and stream into that stream's URL (a URL template or
// an HTTP lookup); the source then delegates to the RTSP or RTMP driver.
//
// A P2P camera's URL in Vigia is p2p://[user]:{password}@{serial}/{stream}.
package p2p
