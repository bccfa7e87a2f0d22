package fs

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

// Query parameters of a signed URL.
const (
	paramExpiry    = "exp"
	paramSignature = "sig"
)

// SignedURL returns {BaseURL}/{key}?exp={unix seconds}&sig={signature of
// the key for purpose sign.StorageURL until exp}. Handler serves it until
// exp has passed. The object need not exist yet.
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
	exp := f.now().Add(expiry)
	return strings.TrimRight(f.baseURL, "/") + "/" + escapeKey(key) +
		"?" + paramExpiry + "=" + strconv.FormatInt(exp.Unix(), 10) + "&" + paramSignature + "=" + f.keys.Sign(sign.StorageURL, exp, key), nil
}

// verify reports whether sig signs key until exp and exp has not passed.
func (f *FS) verify(key, exp, sig string) bool {
	if f.keys == nil {
		return false
	}
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || e <= 0 {
		return false
	}
	return f.keys.Verify(sign.StorageURL, sig, time.Unix(e, 0), f.now(), key)
}

// escapeKey escapes each segment of key for a URL path.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
