package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"go.uber.org/zap"
)

// shape is the error envelope of an operation.
type shape int

const (
	// shapeLower is {"code": 1, "msg": "..."}.
	shapeLower shape = iota
	// shapeUpper is {"CODE": 1, "MSG": "...", "DATA": []} (recordings).
	shapeUpper
)

// handlerFunc handles a request; a returned error is written in the
// route's envelope.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// apiError is an error answered to the caller.
type apiError struct {
	status int
	msg    string
	fields fieldErrors // 422 only
	header map[string]string
}

func (e *apiError) Error() string { return e.msg }

func fail(status int, msg string) *apiError { return &apiError{status: status, msg: msg} }

// Common refusals.
var (
	errNoToken      = fail(http.StatusUnauthorized, "missing token: send it as 'Authorization: Bearer <token>' or ?token=")
	errTokenPlace   = fail(http.StatusUnauthorized, "token must be sent as 'Authorization: Bearer <token>' or ?token=")
	errBadToken     = fail(http.StatusUnauthorized, "invalid token")
	errBlocked      = fail(http.StatusForbidden, "access blocked")
	errNotOperator  = fail(http.StatusForbidden, "this operation needs an operator token")
	errCameraAbsent = fail(http.StatusNotFound, "camera not found")
	errBadDigest    = fail(http.StatusForbidden, "invalid or expired digest")
)

// errorBody is the body of every error of the lower-case envelope. Errors
// is present on 422 only: each invalid field with its messages.
type errorBody struct {
	Code   int                 `json:"code"`
	Msg    string              `json:"msg"`
	Errors map[string][]string `json:"errors,omitempty"`
}

// upperBody is the envelope of the recordings operation.
type upperBody struct {
	Code   int                 `json:"CODE"`
	Msg    string              `json:"MSG"`
	Data   any                 `json:"DATA"`
	Errors map[string][]string `json:"errors,omitempty"`
}

// wrap turns h into an http.Handler writing its errors in envelope sh.
func (s *Server) wrap(sh shape, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panic", zap.String("route", r.Pattern), zap.Any("panic", v), zap.Stack("stack"))
				s.writeError(w, sh, fail(http.StatusInternalServerError, "internal error"))
			}
		}()
		err := h(w, r)
		if err == nil {
			return
		}
		var ae *apiError
		if !errors.As(err, &ae) {
			s.log.Error("request failed", zap.String("method", r.Method), zap.String("route", r.Pattern), zap.Error(err))
			ae = fail(http.StatusInternalServerError, "internal error")
		}
		s.writeError(w, sh, ae)
	})
}

func (s *Server) writeError(w http.ResponseWriter, sh shape, e *apiError) {
	for k, v := range e.header {
		w.Header().Set(k, v)
	}
	if sh == shapeUpper {
		writeJSON(w, e.status, upperBody{Code: 1, Msg: e.msg, Data: []any{}, Errors: e.fields})
		return
	}
	writeJSON(w, e.status, errorBody{Code: 1, Msg: e.msg, Errors: e.fields})
}

// writeJSON writes v as the JSON body with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff") // text in the JSON is never sniffed as HTML
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// envelope is the success body of the operations that answer {code, msg, ...}.
type envelope struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
}
