package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// minSecretLen is the shortest security secret accepted, in bytes.
const minSecretLen = 16

// validateSecurity checks the security section and http.trusted_proxies.
func (c *Config) validateSecurity(v *validator) {
	s := c.Security
	if s.Secret != "" && len(s.Secret) < minSecretLen {
		v.add("security.secret", fmt.Errorf("%w: %d bytes (want %d or more)", ErrInvalidValue, len(s.Secret), minSecretLen))
	}
	switch {
	case s.PreviousSecret == "" && !s.PreviousUntil.Time().IsZero():
		v.add("security.previous_secret", fmt.Errorf("%w with security.previous_until", ErrRequired))
	case s.PreviousSecret == "":
	case len(s.PreviousSecret) < minSecretLen:
		v.add("security.previous_secret", fmt.Errorf("%w: %d bytes (want %d or more)", ErrInvalidValue, len(s.PreviousSecret), minSecretLen))
	case s.PreviousSecret == s.Secret:
		v.add("security.previous_secret", fmt.Errorf("%w: equals security.secret", ErrInvalidValue))
	case s.PreviousUntil.Time().IsZero():
		v.add("security.previous_until", fmt.Errorf("%w with security.previous_secret", ErrRequired))
	}
	v.positive("security.live_url_expiry", s.LiveURLExpiry)
	if _, err := ParsePrefixList(c.HTTP.TrustedProxies); err != nil {
		v.add("http.trusted_proxies", err)
	}
	for _, o := range SplitList(c.HTTP.CORSOrigins) {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			v.add("http.cors_origins", fmt.Errorf("%w %q (want scheme://host[:port])", ErrInvalidValue, o))
		}
	}
	if c.API.LoginAccountAttempts < 1 {
		v.add("api.login_account_attempts", fmt.Errorf("%w %d (want 1 or more)", ErrInvalidValue, c.API.LoginAccountAttempts))
	}
}

// ParsePrefixList parses a comma-separated list of CIDRs and addresses
// (an address is the prefix of that address alone), such as
// http.trusted_proxies. Empty text is an empty list.
func ParsePrefixList(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if a, err := netip.ParseAddr(f); err == nil {
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%w %q (want comma-separated CIDRs or addresses, e.g. 10.0.0.0/8, 127.0.0.1)", ErrInvalidValue, f)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
