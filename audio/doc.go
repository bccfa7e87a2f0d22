// Package audio holds audio codec code free of cgo and of networking:
// G.711 µ-law and A-law sample conversion, and the framing of Opus packets
// (RFC 6716). The transcoding to AAC that uses them is audio/transcode.
package audio
