package live

import (
	"net/url"
	"strconv"
	"time"

	"github.com/vigia/vigia/sign"
)

// Token returns the query (exp and sig) that opens camera's live stream
// until exp: sig signs the camera for purpose sign.LiveURL until exp.
func Token(k *sign.Keys, camera string, exp time.Time) url.Values {
	return url.Values{"exp": {strconv.FormatInt(exp.Unix(), 10)}, "sig": {k.Sign(sign.LiveURL, exp, camera)}}
}

// URL returns the signed live playlist URL of camera on the node whose HTTP
// base is base.
func URL(base string, k *sign.Keys, camera string, exp time.Time) string {
	return base + "/live/" + url.PathEscape(camera) + "/index.m3u8?" + Token(k, camera, exp).Encode()
}

// WHEPURL returns the signed WebRTC (WHEP) address of camera on the node
// whose HTTP base is base. It differs from URL only in its last path
// element ("whep" for "index.m3u8"): the same token opens both.
func WHEPURL(base string, k *sign.Keys, camera string, exp time.Time) string {
	return base + "/live/" + url.PathEscape(camera) + "/whep?" + Token(k, camera, exp).Encode()
}

// tokenError says why a token is refused: 401 when missing, 403 when wrong
// or expired.
type tokenError struct {
	status int
	msg    string
}

// check verifies the token in q for camera at now.
func check(k *sign.Keys, camera string, q url.Values, now time.Time) *tokenError {
	expS, sig := q.Get("exp"), q.Get("sig")
	if expS == "" || sig == "" {
		return &tokenError{401, "missing token"}
	}
	exp, err := strconv.ParseInt(expS, 10, 64)
	if err != nil || exp <= 0 || k == nil {
		return &tokenError{403, "invalid token"}
	}
	if now.Unix() > exp {
		return &tokenError{403, "expired token"}
	}
	if !k.Verify(sign.LiveURL, sig, time.Unix(exp, 0), now, camera) {
		return &tokenError{403, "invalid token"}
	}
	return nil
}
