package rtmp

import (
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/vigia/vigia/sign"
)

// App is the RTMP application cameras publish to.
const App = "live"

// PushKey returns a camera's stream key under secret (see PushKeyOf); ""
// when the secret is too short to sign with.
func PushKey(secret []byte, camera string) string {
	k, err := sign.New(secret)
	if err != nil {
		return ""
	}
	return PushKeyOf(k, camera)
}

// PushKeyOf returns a camera's stream key: the signature of the camera id
// for purpose sign.RTMPKey, without expiry, under k's current secret (32
// hex digits). Only holders of the cluster secret can compute it, so one
// camera's key tells nothing about another's.
func PushKeyOf(k *sign.Keys, camera string) string {
	return k.Sign(sign.RTMPKey, time.Time{}, camera)
}

// CheckKey reports whether key is the camera's stream key under secret, in
// constant time.
func CheckKey(secret []byte, camera, key string) bool {
	k, err := sign.New(secret)
	if err != nil {
		return false
	}
	return CheckKeyOf(k, camera, key, time.Now())
}

// CheckKeyOf reports whether key is the camera's stream key under k's
// current secret or, until the end of a rotation's overlap (now decides),
// its previous one.
func CheckKeyOf(k *sign.Keys, camera, key string, now time.Time) bool {
	return k.Verify(sign.RTMPKey, key, time.Time{}, now, camera)
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
