package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/vigia/vigia/api/db"
)

// principal is who makes a request: the operator, or a user of a client.
type principal struct {
	operator bool
	user     db.User
	client   db.Client
}

// clientID is the client whose data the caller sees; 0 for the operator
// (every client).
func (p principal) clientID() int64 {
	if p.operator {
		return 0
	}
	return p.client.ID
}

// userID is the acting user's id, 0 for the operator.
func (p principal) userID() int64 {
	if p.operator {
		return 0
	}
	return p.user.ID
}

// tokenOf returns the caller's token: the token field (query or body), or
// an Authorization: Bearer header.
func tokenOf(r *http.Request, in map[string]any) string {
	if t, ok := in["token"].(string); ok && t != "" {
		return strings.TrimSpace(t)
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// isOperator reports whether token is one of the operator tokens
// (constant time).
func (s *Server) isOperator(token string) bool {
	if token == "" {
		return false
	}
	h := sha256.Sum256([]byte(token))
	ok := 0
	for _, o := range s.operator {
		ok |= subtle.ConstantTimeCompare(h[:], o[:])
	}
	return ok == 1
}

// authenticate resolves token: 401 when missing or unknown, 403 when the
// user or its client is blocked.
func (s *Server) authenticate(ctx context.Context, token string) (principal, error) {
	if token == "" {
		return principal{}, errNoToken
	}
	if s.isOperator(token) {
		return principal{operator: true}, nil
	}
	u, c, err := s.cfg.DB.UserByToken(ctx, hashToken(token))
	if errors.Is(err, db.ErrNotFound) {
		return principal{}, errBadToken
	}
	if err != nil {
		return principal{}, err
	}
	if u.Blocked || c.Blocked {
		return principal{}, errBlocked
	}
	return principal{user: u, client: c}, nil
}

// caller authenticates the request's token. A token the request holds
// where none is read (an Authorization header without "Bearer ") is
// answered with where it goes.
func (s *Server) caller(r *http.Request, in map[string]any) (principal, error) {
	tok := tokenOf(r, in)
	if tok == "" && strings.TrimSpace(r.Header.Get("Authorization")) != "" {
		return principal{}, errTokenPlace
	}
	return s.authenticate(r.Context(), tok)
}

// operatorOnly authenticates the request and requires the operator.
func (s *Server) operatorOnly(r *http.Request, in map[string]any) error {
	p, err := s.caller(r, in)
	if err != nil {
		return err
	}
	if !p.operator {
		return errNotOperator
	}
	return nil
}

// ownedCamera returns camera id when the caller may see it; a camera of
// another client is answered exactly like a missing one (404).
func (s *Server) ownedCamera(ctx context.Context, p principal, id int64) (db.Camera, error) {
	c, err := s.cfg.DB.Camera(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return db.Camera{}, errCameraAbsent
	}
	if err != nil {
		return db.Camera{}, err
	}
	if !p.operator && c.ClientID != p.client.ID {
		return db.Camera{}, errCameraAbsent
	}
	return c, nil
}

// clientOf returns the client of camera c: the caller's own for a user
// (ownedCamera made sure of it), read from the database for the operator.
func (s *Server) clientOf(ctx context.Context, p principal, c db.Camera) (db.Client, error) {
	if !p.operator && p.client.ID == c.ClientID {
		return p.client, nil
	}
	return s.cfg.DB.Client(ctx, c.ClientID)
}

// cameraRequest is the common start of the camera-scoped operations: read
// the input, authenticate, check that the query id (when given) matches the
// path, load the camera and check ownership.
func (s *Server) cameraRequest(w http.ResponseWriter, r *http.Request) (map[string]any, principal, db.Camera, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return nil, principal{}, db.Camera{}, err
	}
	in, err := s.readInput(w, r)
	if err != nil {
		return nil, principal{}, db.Camera{}, err
	}
	p, err := s.caller(r, in)
	if err != nil {
		return nil, principal{}, db.Camera{}, err
	}
	if q, ok := in["id"]; ok && q != nil && q != "" {
		errs := fieldErrors{}
		if n, ok := newFields(in, errs).integer("id", false); ok && n != id {
			errs.add("id", "must match the camera id of the path")
		}
		if err := errs.err(); err != nil {
			return nil, principal{}, db.Camera{}, err
		}
	}
	c, err := s.ownedCamera(r.Context(), p, id)
	if err != nil {
		return nil, principal{}, db.Camera{}, err
	}
	return in, p, c, nil
}

func camID(id int64) string { return strconv.FormatInt(id, 10) }
