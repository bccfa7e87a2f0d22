package rtmp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/url"
	"strconv"
)

// App is the RTMP application cameras publish to.
const App = "live"

// keyLen is the length of a stream key in hex digits (128 bits).
const keyLen = 32

// PushKey returns a camera's stream key: the first 128 bits of
// HMAC-SHA256(secret, "rtmp-push:" + camera), in hex. Only holders of the
// cluster secret can compute it, so one camera's key tells nothing about
// another's.
func PushKey(secret []byte, camera string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("rtmp-push:" + camera))
	return hex.EncodeToString(m.Sum(nil))[:keyLen]
}

// CheckKey reports whether key is the camera's stream key, in constant
// time.
func CheckKey(secret []byte, camera, key string) bool {
	return hmac.Equal([]byte(PushKey(secret, camera)), []byte(key))
}

// PushURL returns the URL a camera publishes to (the spec's rtmp_url):
// rtmp://{host}:{port}/live/{camera}?key={key}.
func PushURL(host string, port int, secret []byte, camera string) string {
	u := url.URL{
		Scheme:   "rtmp",
		Host:     net.JoinHostPort(host, strconv.Itoa(port)),
		Path:     "/" + App + "/" + camera,
		RawQuery: "key=" + PushKey(secret, camera),
	}
	return u.String()
}
