package api

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/vigia/vigia/api/db"
)

// tokenResponse is the body of a successful POST /api/v1/auth/token.
type tokenResponse struct {
	Code     int    `json:"code"`
	Msg      string `json:"msg"`
	APIToken string `json:"api_token"`
	UserID   int64  `json:"user_id"`
	ClientID int64  `json:"client_id"`
}

// issueToken is POST /api/v1/auth/token: e-mail and password give a new
// api_token. Failed attempts are counted per e-mail and per client IP; past
// the limit the answer is 429 with Retry-After until the window passes.
func (s *Server) issueToken(w http.ResponseWriter, r *http.Request) error {
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	errs := fieldErrors{}
	f := newFields(in, errs)
	email := strings.ToLower(f.str("email", true, maxText))
	pass := f.rawStr("password", true, maxPassword)
	if err := errs.err(); err != nil {
		return err
	}
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	keys := []string{"email:" + email, "ip:" + ip}
	now := s.now()
	for _, k := range keys {
		if blocked, wait := s.throttle.blocked(k, now); blocked {
			secs := int(wait/time.Second) + 1
			return &apiError{status: http.StatusTooManyRequests, msg: "too many failed attempts; try again later",
				header: map[string]string{"Retry-After": strconv.Itoa(secs)}}
		}
	}
	u, err := s.cfg.DB.UserByEmail(r.Context(), email)
	hash := s.dummy
	if err == nil {
		hash = []byte(u.PasswordHash)
	} else if !errors.Is(err, db.ErrNotFound) {
		return err
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(pass)) != nil || err != nil {
		for _, k := range keys {
			s.throttle.fail(k, now)
		}
		return fail(http.StatusUnauthorized, "invalid e-mail or password")
	}
	s.throttle.reset(keys[0])
	c, err := s.cfg.DB.Client(r.Context(), u.ClientID)
	if err != nil {
		return err
	}
	if u.Blocked || c.Blocked {
		return errBlocked
	}
	tok, err := newToken()
	if err != nil {
		return err
	}
	if err := s.cfg.DB.AddToken(r.Context(), u.ID, hashToken(tok), now); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tokenResponse{APIToken: tok, UserID: u.ID, ClientID: u.ClientID})
	return nil
}
