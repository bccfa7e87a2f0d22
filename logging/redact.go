package logging

import (
	"net/url"
	"strings"
)

// Mask replaces each password and secret query value removed by RedactURL.
const Mask = "xxxxx"

// sensitiveParams are the query parameter names whose values RedactURL
// removes, lower-cased.
var sensitiveParams = map[string]bool{
	"token":            true,
	"key":              true,
	"sig":              true,
	"signature":        true,
	"password":         true,
	"pass":             true,
	"secret":           true,
	"digest":           true,
	"hash":             true,
	"player_digest":    true,
	"x-amz-signature":  true,
	"x-amz-credential": true,
}

// RedactURL returns raw with the password of its user information and the
// values of secret-bearing query parameters (token, key, sig, signature,
// password, pass, secret, digest, hash, player_digest, X-Amz-Signature,
// X-Amz-Credential; names compared case-insensitively) replaced by Mask.
//
// Input that does not parse as a URL, or parses ambiguously (an "@" left in
// the path), is redacted textually: everything between the first ":" of the
// apparent user information and its last "@" is masked. RedactURL never
// fails; the result is meant for logs and error messages only.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || strings.Contains(u.Path, "@") {
		return redactText(raw)
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), Mask)
		}
	}
	u.RawQuery = redactQuery(u.RawQuery)
	return u.String()
}

// redactText redacts a string that url.Parse rejects or would misread.
func redactText(s string) string {
	prefix, rest := "", s
	if i := strings.Index(s, "://"); i >= 0 {
		prefix, rest = s[:i+3], s[i+3:]
	}
	headEnd := strings.IndexAny(rest, "?#")
	if headEnd < 0 {
		headEnd = len(rest)
	}
	head, tail := rest[:headEnd], rest[headEnd:]
	if at := strings.LastIndex(head, "@"); at >= 0 {
		if c := strings.Index(head[:at], ":"); c >= 0 {
			head = head[:c+1] + Mask + head[at:]
		}
	}
	if strings.HasPrefix(tail, "?") {
		query, frag := tail[1:], ""
		if h := strings.Index(query, "#"); h >= 0 {
			query, frag = query[:h], query[h:]
		}
		tail = "?" + redactQuery(query) + frag
	}
	return prefix + head + tail
}

// redactQuery masks the values of sensitive parameters in a raw query,
// keeping the order and encoding of everything else.
func redactQuery(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if !hasValue {
			continue
		}
		decoded, err := url.QueryUnescape(name)
		if err != nil {
			decoded = name
		}
		if sensitiveParams[strings.ToLower(decoded)] {
			parts[i] = name + "=" + Mask
		}
	}
	return strings.Join(parts, "&")
}
