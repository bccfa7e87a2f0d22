package onvif

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// challenge is a parsed WWW-Authenticate: Digest header.
type challenge struct {
	realm, nonce, opaque, algorithm, qop string
}

// parseChallenge reads the parameters of a Digest challenge; ok is false
// when the header is not a Digest challenge.
func parseChallenge(h string) (challenge, bool) {
	h = strings.TrimSpace(h)
	if len(h) < 7 || !strings.EqualFold(h[:7], "digest ") {
		return challenge{}, false
	}
	var c challenge
	for _, p := range splitParams(h[7:]) {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch k {
		case "realm":
			c.realm = v
		case "nonce":
			c.nonce = v
		case "opaque":
			c.opaque = v
		case "algorithm":
			c.algorithm = v
		case "qop":
			// "auth,auth-int": only auth is offered.
			for _, q := range strings.Split(v, ",") {
				if strings.TrimSpace(q) == "auth" {
					c.qop = "auth"
				}
			}
		}
	}
	return c, c.nonce != ""
}

// splitParams splits on commas outside quotes.
func splitParams(s string) []string {
	var out []string
	quoted := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// authorization returns the Authorization header answering c (RFC 7616,
// MD5 or SHA-256, qop auth or none).
func (c challenge) authorization(user, password, method, uri string, nc int, cnonce string) (string, error) {
	var newHash func() hash.Hash
	switch strings.ToUpper(c.algorithm) {
	case "", "MD5":
		newHash = md5.New
	case "SHA-256":
		newHash = sha256.New
	default:
		return "", fmt.Errorf("onvif: digest algorithm %q not supported", c.algorithm)
	}
	hx := func(s string) string {
		h := newHash()
		h.Write([]byte(s))
		return hex.EncodeToString(h.Sum(nil))
	}
	ha1 := hx(user + ":" + c.realm + ":" + password)
	ha2 := hx(method + ":" + uri)
	var b strings.Builder
	fmt.Fprintf(&b, `Digest username="%s", realm="%s", nonce="%s", uri="%s"`, user, c.realm, c.nonce, uri)
	if c.qop != "" {
		ncs := fmt.Sprintf("%08x", nc)
		fmt.Fprintf(&b, `, qop=auth, nc=%s, cnonce="%s", response="%s"`, ncs, cnonce, hx(ha1+":"+c.nonce+":"+ncs+":"+cnonce+":auth:"+ha2))
	} else {
		fmt.Fprintf(&b, `, response="%s"`, hx(ha1+":"+c.nonce+":"+ha2))
	}
	if c.opaque != "" {
		fmt.Fprintf(&b, `, opaque="%s"`, c.opaque)
	}
	if c.algorithm != "" {
		fmt.Fprintf(&b, `, algorithm=%s`, c.algorithm)
	}
	return b.String(), nil
}
