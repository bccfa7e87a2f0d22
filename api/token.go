package api

import (
	"errors"
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
// api_token. Each request takes one attempt from its client address
// (ClientAddr) and from its e-mail address before the password is checked,
// in one step, so requests running in parallel are all counted; a
// successful one gives its attempts back (and clears the e-mail's). When
// either has none left the answer is 429 with Retry-After, and bcrypt is
// not run.
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
	addrKey, emailKey := addrThrottleKey(s.clientAddr(r)), "email:"+email
	now := s.now()
	if ok, wait := s.throttle.reserve([]limit{{addrKey, s.cfg.LoginAttempts}, {emailKey, s.cfg.LoginAccountAttempts}}, now); !ok {
		secs := int((wait + time.Second - 1) / time.Second)
		return &apiError{status: http.StatusTooManyRequests, msg: "too many failed attempts; try again later",
			header: map[string]string{"Retry-After": strconv.Itoa(secs)}}
	}
	u, err := s.cfg.DB.UserByEmail(r.Context(), email)
	hash := s.dummy
	if err == nil {
		hash = []byte(u.PasswordHash)
	} else if !errors.Is(err, db.ErrNotFound) {
		return err
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(pass)) != nil || err != nil {
		return fail(http.StatusUnauthorized, "invalid e-mail or password")
	}
	s.throttle.release(addrKey, now)
	s.throttle.reset(emailKey)
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
