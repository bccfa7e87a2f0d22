package rtmp

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/sign"
)

// App is the RTMP application cameras publish to.
const App = "live"

// PushKey returns the stream key of the camera id under secret
// (camera.PushKey); "" when the secret is too short to sign with.
func PushKey(secret []byte, id string) string {
	k, err := sign.New(secret)
	if err != nil {
		return ""
	}
	return camera.PushKey(k, id)
}

// CheckKey reports whether key is the stream key of the camera id under
// secret, in constant time.
func CheckKey(secret []byte, id, key string) bool {
	k, err := sign.New(secret)
	if err != nil {
		return false
	}
	return CheckKeyOf(k, id, key, time.Now())
}

// CheckKeyOf reports whether key is the stream key of the camera id under
// k (camera.CheckPushKey): its current secret or, until the end of a
// rotation's overlap (now decides), its previous one.
func CheckKeyOf(k *sign.Keys, id, key string, now time.Time) bool {
	return camera.CheckPushKey(k, id, key, now)
}

// keyGenTimeout bounds one KeyGen call.
const keyGenTimeout = 2 * time.Second

// checkKey reports whether key is the stream key of camera id at the key
// generation the registry names (ServerConfig.KeyGen).
func (s *Server) checkKey(id, key string) bool {
	return camera.CheckPushKeyGen(s.cfg.Keys, id, key, s.keyGen(id), time.Now())
}

// keyGen returns the generation of camera id's stream key: KeyGen's, or
// when it fails the last one it gave.
func (s *Server) keyGen(id string) int {
	if s.cfg.KeyGen == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyGenTimeout)
	defer cancel()
	gen, err := s.cfg.KeyGen(ctx, id)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
		return s.gens[id]
	case gen == 0:
		delete(s.gens, id)
	default:
		s.gens[id] = gen
	}
	return gen
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
