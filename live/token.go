package live

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"time"
)

// purpose binds live tokens to live playback, so a token made for another
// purpose never opens a live stream.
const purpose = "live"

func sign(secret []byte, camera string, exp int64) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(camera))
	m.Write([]byte{0})
	m.Write([]byte(strconv.FormatInt(exp, 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// Token returns the query (exp and sig) that opens camera's live stream
// until exp.
func Token(secret []byte, camera string, exp time.Time) url.Values {
	e := exp.Unix()
	return url.Values{"exp": {strconv.FormatInt(e, 10)}, "sig": {sign(secret, camera, e)}}
}

// URL returns the signed live playlist URL of camera on the node whose HTTP
// base is base.
func URL(base string, secret []byte, camera string, exp time.Time) string {
	return base + "/live/" + url.PathEscape(camera) + "/index.m3u8?" + Token(secret, camera, exp).Encode()
}

// tokenError says why a token is refused: 401 when missing, 403 when wrong
// or expired.
type tokenError struct {
	status int
	msg    string
}

// check verifies the token in q for camera at now.
func check(secret []byte, camera string, q url.Values, now time.Time) *tokenError {
	expS, sig := q.Get("exp"), q.Get("sig")
	if expS == "" || sig == "" {
		return &tokenError{401, "missing token"}
	}
	exp, err := strconv.ParseInt(expS, 10, 64)
	if err != nil {
		return &tokenError{403, "invalid token"}
	}
	if !hmac.Equal([]byte(sig), []byte(sign(secret, camera, exp))) {
		return &tokenError{403, "invalid token"}
	}
	if now.Unix() > exp {
		return &tokenError{403, "expired token"}
	}
	return nil
}
