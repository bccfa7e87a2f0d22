package fs

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/storage"
)

// Query parameters of a signed URL.
const (
	paramExpiry    = "exp"
	paramSignature = "sig"
)

// SignedURL returns {BaseURL}/{key}?exp={unix seconds}&sig={hex HMAC-SHA256
// of key, "\n", exp}. Handler serves it until exp has passed. The object need
// not exist yet.
func (f *FS) SignedURL(ctx context.Context, key string, expiry time.Duration) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("fs signed url %q: %w", key, err)
	}
	if err := storage.ValidateKey(key); err != nil {
		return "", fmt.Errorf("fs signed url: %w", err)
	}
	if f.baseURL == "" {
		return "", fmt.Errorf("fs signed url %q: %w", key, ErrSigningDisabled)
	}
	if expiry <= 0 {
		return "", fmt.Errorf("fs signed url %q: %v: %w", key, expiry, storage.ErrInvalidExpiry)
	}
	exp := f.now().Add(expiry).Unix()
	expStr := strconv.FormatInt(exp, 10)
	return strings.TrimRight(f.baseURL, "/") + "/" + escapeKey(key) +
		"?" + paramExpiry + "=" + expStr + "&" + paramSignature + "=" + hex.EncodeToString(f.sign(key, expStr)), nil
}

// sign returns the HMAC of key and the decimal expiry.
func (f *FS) sign(key, exp string) []byte {
	m := hmac.New(sha256.New, f.secret)
	m.Write([]byte(key))
	m.Write([]byte{'\n'})
	m.Write([]byte(exp))
	return m.Sum(nil)
}

// verify reports whether sigHex signs key until exp and exp has not passed.
func (f *FS) verify(key, exp, sigHex string) bool {
	if len(f.secret) == 0 {
		return false
	}
	sig, err := hex.DecodeString(sigHex)
	if err != nil || len(sig) != sha256.Size {
		return false
	}
	// Compare before looking at the expiry so timing does not depend on it.
	ok := hmac.Equal(sig, f.sign(key, exp))
	expUnix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return false
	}
	return ok && f.now().Unix() <= expUnix
}

// escapeKey escapes each segment of key for a URL path.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
