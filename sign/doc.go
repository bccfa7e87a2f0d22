// Package sign is the one key scheme of Vigia: every value signed or sealed
// under the security secret (API digests, storage URLs, live tokens, RTMP
// stream keys, sealed camera credentials) uses a key derived for its
// purpose alone, so a value made for one purpose never verifies for
// another.
//
// Keys are derived with HKDF-SHA256 from the secret, without salt, with the
// info "vigia {purpose} v1". A signature is the first 128 bits of
// HMAC-SHA256 under the purpose's key over the expiry (Unix seconds, 0 for
// none) and the fields, each length-prefixed, written as 32 lowercase hex
// digits.
//
// The secret can be rotated with an overlap: Keys holds the current secret
// and, optionally, the previous one with the time it stops verifying.
// Signing and sealing always use the current secret; verifying accepts the
// previous one until then; opening a sealed value accepts it as long as it
// is configured, so sealed values can be re-sealed at leisure.
package sign
