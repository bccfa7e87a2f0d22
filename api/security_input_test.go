package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vigia/vigia/camera"
)

// This file holds the bad-input tests of the HTTP interface: wrong JSON
// types in every field of the writing operations, bodies over the body
// limit, and unicode and injection strings in every text field.

// eachLoggedEnv runs fn against SQLite and PostgreSQL with the server's
// logs captured; after fn, no request may have failed with an internal
// error or a panic (both are logged at error level).
func eachLoggedEnv(t *testing.T, mod func(*Config), fn func(t *testing.T, e *env)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			core, logs := observer.New(zapcore.ErrorLevel)
			e := newEnv(t, kind, func(c *Config) {
				c.Log = zap.New(core)
				if mod != nil {
					mod(c)
				}
			})
			fn(t, e)
			for _, l := range logs.All() {
				t.Errorf("server logged %q: %v", l.Message, l.ContextMap())
			}
		})
	}
}

// wantFieldError fails unless r is the documented 422 body naming field:
// {"code": 1, "msg": "invalid fields: …field…", "errors": {field: [...]}}.
func wantFieldError(t *testing.T, what string, r resp, field string) {
	t.Helper()
	if r.status != http.StatusUnprocessableEntity {
		t.Errorf("%s: status %d, want 422: %s", what, r.status, r.body)
		return
	}
	var body struct {
		Code   *int                `json:"code"`
		Msg    string              `json:"msg"`
		Errors map[string][]string `json:"errors"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || body.Code == nil || *body.Code != 1 {
		t.Errorf("%s: not the error body: %s", what, r.body)
		return
	}
	if len(body.Errors[field]) == 0 || !strings.Contains(body.Msg, field) {
		t.Errorf("%s: the 422 does not name %q: %s", what, field, r.body)
	}
}

// wantErrorBody fails unless r has the status and the {"code": 1, "msg"}
// body.
func wantErrorBody(t *testing.T, what string, r resp, status int) {
	t.Helper()
	var body struct {
		Code *int   `json:"code"`
		Msg  string `json:"msg"`
	}
	if r.status != status || json.Unmarshal(r.body, &body) != nil || body.Code == nil || *body.Code != 1 || body.Msg == "" {
		t.Errorf("%s: status %d, want %d with the error body: %s", what, r.status, status, r.body)
	}
}

// fieldKind is how a field is read, which decides the wrong values tried.
type fieldKind int

const (
	kindStr  fieldKind = iota // text; numbers are accepted as their text
	kindRaw                   // passwords: strings only
	kindInt                   // integers; numeric strings are accepted
	kindList                  // the users list
)

// wrongValues returns values of the wrong JSON type for a field of kind.
// Required fields also get null and "" (read as missing).
func wrongValues(kind fieldKind, required bool) []any {
	var v []any
	switch kind {
	case kindStr:
		v = []any{map[string]any{}, map[string]any{"a": "b"}, []any{}, []any{"x"}, true, false}
	case kindRaw:
		v = []any{map[string]any{"a": "b"}, []any{"password1"}, true}
	case kindInt:
		v = []any{"abc", "1.5", json.Number("1.5"), "12abc", "99999999999999999999", json.Number("1e300"),
			json.Number("-1e19"), map[string]any{"n": 1}, []any{1}, true}
	case kindList:
		v = []any{"x", json.Number("5"), map[string]any{"name": "a"}, true, []any{}, []any{"x"}, []any{json.Number("5")}, []any{[]any{}}}
	}
	if required {
		v = append(v, nil)
		if kind != kindList {
			v = append(v, "")
		}
	}
	return v
}

// typedField is one input field of an operation.
type typedField struct {
	name     string
	kind     fieldKind
	required bool
}

var (
	clientFields = []typedField{
		{"name", kindStr, true}, {"document_type", kindInt, true}, {"document_number", kindStr, true},
		{"phone", kindStr, true}, {"cep", kindStr, true}, {"address", kindStr, true},
		{"address_number", kindStr, true}, {"address_comp", kindStr, false}, {"address_nh", kindStr, true},
		{"city", kindStr, true}, {"state", kindStr, true}, {"users", kindList, true},
	}
	userFields = []typedField{
		{"name", kindStr, true}, {"email", kindStr, true}, {"phone", kindStr, true},
		{"user_type", kindInt, true}, {"password", kindRaw, true}, {"password_conf", kindRaw, true},
	}
	cameraFields = []typedField{
		{"description", kindStr, true}, {"camera_address", kindStr, true}, {"latitude", kindStr, true},
		{"longitude", kindStr, true}, {"connection_type", kindInt, true}, {"resolution_id", kindInt, true},
		{"history_days", kindInt, true}, {"client_id", kindInt, true}, {"model_id", kindInt, true},
		{"stream", kindStr, true}, {"dns", kindStr, true}, {"port", kindStr, true}, {"user", kindStr, true},
		{"pass", kindRaw, true}, {"channel", kindInt, false}, {"sound", kindInt, false}, {"typed_url", kindStr, false},
	}
	p2pFields = []typedField{
		{"stream", kindStr, true}, {"p2p_serial_number", kindStr, true}, {"p2p_password", kindRaw, true},
	}
	videoFields = []typedField{
		{"camera_id", kindInt, true}, {"start_at", kindInt, true}, {"end_at", kindInt, true}, {"description", kindStr, true},
	}
)

// seq numbers the e-mail addresses of a test.
type seq struct {
	mu sync.Mutex
	n  int
}

func (s *seq) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.n
}

func userPayload(n int) map[string]any {
	return map[string]any{"name": "U", "email": fmt.Sprintf("u%d@example.com", n), "phone": "11",
		"user_type": 2, "password": "password1", "password_conf": "password1"}
}

func clientPayload(n int) map[string]any {
	return map[string]any{"name": "C", "document_type": 2, "document_number": cnpj(), "phone": "11 5555-0000",
		"cep": "01000-000", "address": "Rua A", "address_number": "10", "address_nh": "Centro", "city": "São Paulo",
		"state": "SP", "users": []any{userPayload(n)}}
}

func p2pCamera(clientID int64) map[string]any {
	return map[string]any{"description": "P2P", "camera_address": "Rua B", "latitude": "-23.5", "longitude": "-46.6",
		"connection_type": 2, "resolution_id": 2, "history_days": 7, "client_id": clientID, "stream": "0",
		"p2p_serial_number": "SN123", "p2p_password": "p2p-secret"}
}

// sendJSON posts v (a map holding json.Number values as numbers) as JSON.
func (e *env) sendJSON(method, path string, v map[string]any) resp {
	e.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do(method, path, string(data))
}

// TestWrongJSONTypes sends every field of create client, create user,
// create and update camera and create downloadable video with values of
// the wrong JSON type (objects, lists and booleans where text is expected,
// text, fractions, overflowing numbers and objects where an integer is): each
// is answered 422 with the error body naming the field; whole bodies of the
// wrong shape are 400; nothing is a 500 or a panic.
func TestWrongJSONTypes(t *testing.T) {
	eachLoggedEnv(t, nil, func(t *testing.T, e *env) {
		var n seq
		clientID, _, tok := e.clientWithUser("types@example.com")
		camID := e.camera(clientID)
		cam := strconv.FormatInt(camID, 10)
		userPath := op("/api/v1/clients/" + strconv.FormatInt(clientID, 10) + "/users")
		start := e.clock.Now().Add(-10 * time.Minute).UnixMilli()
		videoPayload := func() map[string]any {
			return map[string]any{"camera_id": camID, "start_at": start, "end_at": start + 60000, "description": "v"}
		}
		type operation struct {
			name, method, path string
			ok                 int
			base               func() map[string]any
			fields             []typedField
		}
		ops := []operation{
			{"create client", "POST", op("/api/v1/clients"), 201, func() map[string]any { return clientPayload(n.next()) }, clientFields},
			{"create user", "POST", userPath, 201, func() map[string]any { return userPayload(n.next()) }, userFields},
			{"create camera", "POST", op("/api/v1/cameras"), 201, func() map[string]any { return rtspCamera(clientID, "203.0.113.7") }, cameraFields},
			{"create p2p camera", "POST", op("/api/v1/cameras"), 201, func() map[string]any { return p2pCamera(clientID) }, p2pFields},
			{"update camera", "PUT", op("/api/v1/cameras/" + cam), 201, func() map[string]any { return rtspCamera(clientID, "203.0.113.7") }, cameraFields},
			{"update p2p camera", "PUT", op("/api/v1/cameras/" + cam), 201, func() map[string]any { return p2pCamera(clientID) }, p2pFields},
			{"create video", "POST", "/v2/api/drives?token=" + tok, 200, videoPayload, videoFields},
		}
		tried := 0
		for _, o := range ops {
			// The base payload is valid: the refusals below are the field's.
			e.sendJSON(o.method, o.path, o.base()).want(t, o.ok)
			for _, f := range o.fields {
				for _, v := range wrongValues(f.kind, f.required) {
					body := o.base()
					body[f.name] = v
					what := fmt.Sprintf("%s: %s = %#v (%T)", o.name, f.name, v, v)
					r := e.sendJSON(o.method, o.path, body)
					if f.kind == kindList {
						// A list item of the wrong type is named by its index.
						if r.status != 422 || !bytes.Contains(r.body, []byte(`"users`)) {
							t.Errorf("%s: status %d: %s", what, r.status, r.body)
						}
					} else {
						wantFieldError(t, what, r, f.name)
					}
					tried++
				}
			}
		}
		// Fields of the users of a new client are named users.N.field.
		for _, f := range userFields {
			for _, v := range wrongValues(f.kind, f.required) {
				body := clientPayload(n.next())
				second := userPayload(n.next())
				second[f.name] = v
				body["users"] = []any{userPayload(n.next()), second}
				wantFieldError(t, fmt.Sprintf("create client: users.1.%s = %#v (%T)", f.name, v, v),
					e.sendJSON("POST", op("/api/v1/clients"), body), "users.1."+f.name)
				tried++
			}
		}
		// Integers in range of int64 but out of range of the field.
		for _, c := range []struct {
			what, method, path string
			body               map[string]any
			field              string
		}{
			{"video of 292 million years", "POST", "/v2/api/drives?token=" + tok,
				map[string]any{"camera_id": camID, "start_at": 0, "end_at": int64(1<<63 - 1), "description": "v"}, "end_at"},
			{"video from before 1970", "POST", "/v2/api/drives?token=" + tok,
				map[string]any{"camera_id": camID, "start_at": int64(-1 << 63), "end_at": start, "description": "v"}, "start_at"},
			{"huge channel", "POST", op("/api/v1/cameras"), merge(rtspCamera(clientID, "203.0.113.7"), "channel", int64(1<<63-1)), "channel"},
			{"negative channel", "POST", op("/api/v1/cameras"), merge(rtspCamera(clientID, "203.0.113.7"), "channel", -1), "channel"},
			{"huge client id", "POST", op("/api/v1/cameras"), merge(rtspCamera(clientID, "203.0.113.7"), "client_id", int64(1<<63-1)), "client_id"},
			{"huge document type", "POST", op("/api/v1/clients"), merge(clientPayload(n.next()), "document_type", int64(1<<63-1)), "document_type"},
		} {
			wantFieldError(t, c.what, e.sendJSON(c.method, c.path, c.body), c.field)
			tried++
		}
		// Form bodies: an object (bracketed keys) where text or an integer is.
		for _, c := range []struct {
			what, method, path, form, field string
		}{
			{"camera description[a]", "POST", op("/api/v1/cameras"), "description[a]=x", "description"},
			{"camera client_id[]", "PUT", op("/api/v1/cameras/" + cam), "client_id[]=1&client_id[]=2", "client_id"},
			{"client users=x", "POST", op("/api/v1/clients"), "users=x", "users"},
			{"client users[0][email][x]", "POST", op("/api/v1/clients"), "users[0][email][x]=a@b.c", "users.0.email"},
			{"user password[0]", "POST", userPath, "password[0]=password1", "password"},
			{"video camera_id[x]", "POST", "/v2/api/drives?token=" + tok, "camera_id[x]=" + cam, "camera_id"},
		} {
			form, err := url.ParseQuery(c.form)
			if err != nil {
				t.Fatal(err)
			}
			wantFieldError(t, c.what, e.do(c.method, c.path, form), c.field)
			tried++
		}
		// Whole bodies of the wrong shape, and path ids that are not ids.
		for _, o := range ops {
			for _, body := range []string{`[]`, `"text"`, `5`, `null`, `true`, `{"a":1}{"b":2}`, `{"description":`,
				strings.Repeat("[", 20000) + strings.Repeat("]", 20000)} {
				wantErrorBody(t, o.name+": body "+trunc(body), e.do(o.method, o.path, body), 400)
				tried++
			}
		}
		for _, p := range []string{"/api/v1/cameras/abc", "/api/v1/cameras/-1", "/api/v1/cameras/99999999999999999999", "/api/v1/cameras/1.5"} {
			wantErrorBody(t, "PUT "+p, e.sendJSON("PUT", op(p), rtspCamera(clientID, "203.0.113.7")), 400)
		}
		wantErrorBody(t, "users of client x", e.sendJSON("POST", op("/api/v1/clients/x/users"), userPayload(n.next())), 400)
		t.Logf("%d wrong-typed requests refused", tried)
		// The server still answers.
		e.sendJSON("POST", op("/api/v1/cameras"), rtspCamera(clientID, "203.0.113.7")).want(t, 201)
	})
}

func merge(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}

func trunc(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

// formOf flattens a JSON payload into form fields with bracketed keys.
func formOf(v map[string]any) url.Values {
	out := url.Values{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, item := range x {
				walk(prefix+"["+k+"]", item)
			}
		case []any:
			for i, item := range x {
				walk(prefix+"["+strconv.Itoa(i)+"]", item)
			}
		default:
			out.Set(prefix, fmt.Sprint(x))
		}
	}
	for k, item := range v {
		switch item.(type) {
		case map[string]any, []any:
			walk(k, item)
		default:
			out.Set(k, fmt.Sprint(item))
		}
	}
	return out
}

// TestNULAndInvalidUTF8Refused puts a NUL character (JSON) and invalid
// UTF-8 (form bodies and the query) in every text field of the writing
// operations: each is 422 naming the field on both stores (PostgreSQL
// text cannot hold either, and SQLite would hand them back altered).
func TestNULAndInvalidUTF8Refused(t *testing.T) {
	eachLoggedEnv(t, nil, func(t *testing.T, e *env) {
		var n seq
		clientID, _, tok := e.clientWithUser("nul@example.com")
		camID := e.camera(clientID)
		cam := strconv.FormatInt(camID, 10)
		start := e.clock.Now().Add(-10 * time.Minute).UnixMilli()
		ops := []struct {
			name, method, path string
			base               func() map[string]any
			fields             []typedField
		}{
			{"create client", "POST", op("/api/v1/clients"), func() map[string]any { return clientPayload(n.next()) }, clientFields},
			{"create user", "POST", op("/api/v1/clients/" + strconv.FormatInt(clientID, 10) + "/users"), func() map[string]any { return userPayload(n.next()) }, userFields},
			{"create camera", "POST", op("/api/v1/cameras"), func() map[string]any { return rtspCamera(clientID, "203.0.113.7") }, cameraFields},
			{"create p2p camera", "POST", op("/api/v1/cameras"), func() map[string]any { return p2pCamera(clientID) }, p2pFields},
			{"update camera", "PUT", op("/api/v1/cameras/" + cam), func() map[string]any { return rtspCamera(clientID, "203.0.113.7") }, cameraFields},
			{"create video", "POST", "/v2/api/drives?token=" + tok, func() map[string]any {
				return map[string]any{"camera_id": camID, "start_at": start, "end_at": start + 60000, "description": "v"}
			}, videoFields},
		}
		tried := 0
		for _, o := range ops {
			e.do(o.method, o.path, formOf(o.base())).want(t, map[bool]int{true: 200, false: 201}[o.name == "create video"])
			for _, f := range o.fields {
				if f.kind != kindStr {
					continue
				}
				body := o.base()
				body[f.name] = "a\x00b"
				wantFieldError(t, o.name+": NUL in "+f.name, e.sendJSON(o.method, o.path, body), f.name)
				form := formOf(o.base())
				form.Set(f.name, "a\xffb\xc3")
				wantFieldError(t, o.name+": invalid UTF-8 in form "+f.name, e.do(o.method, o.path, form), f.name)
				tried += 2
			}
		}
		// The query carries text too (downloadable videos read theirs there).
		q := url.Values{"token": {tok}, "camera_id": {cam}, "start_at": {strconv.FormatInt(start, 10)},
			"end_at": {strconv.FormatInt(start+1000, 10)}, "description": {"a\xff\x00b"}}
		wantFieldError(t, "video description in the query", e.do("POST", "/v2/api/drives?"+q.Encode(), nil), "description")
		q = url.Values{"token": {tok}, "start_at": {"2025-03-01\x00"}, "end_at": {"2025-03-31"}, "event_types": {"1\xff"}}
		r := e.do("GET", "/api/v1/events?"+q.Encode(), nil)
		wantFieldError(t, "events start_at", r, "start_at")
		wantFieldError(t, "events event_types", r, "event_types")
		r = e.do("POST", "/api/v1/auth/token", url.Values{"email": {"a\x00@example.com"}, "password": {"password1"}})
		wantFieldError(t, "token e-mail", r, "email")
		t.Logf("%d requests with NUL or invalid UTF-8 refused", tried+4)
	})
}

// rawRequest sends body with content type ct; chunked sends it without a
// Content-Length.
func (e *env) rawRequest(method, path, ct string, body []byte, chunked bool) (resp, error) {
	var rd io.Reader = bytes.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // hides the length: sent chunked
	}
	req, err := http.NewRequest(method, e.http.URL+path, rd)
	if err != nil {
		return resp{}, err
	}
	req.Header.Set("Content-Type", ct)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return resp{}, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, body: data, header: res.Header}, err
}

// TestBodyLimit sends bodies over api.body_limit (JSON with and without a
// Content-Length, urlencoded and multipart forms, and one of 1 MiB) to
// every writing operation: each is 413 with the error body, a body of
// exactly the limit is read, and the server keeps serving afterwards, also
// after many oversized bodies at once.
func TestBodyLimit(t *testing.T) {
	const limit = 8 << 10
	eachLoggedEnv(t, func(c *Config) { c.BodyLimit = limit }, func(t *testing.T, e *env) {
		clientID, _, tok := e.clientWithUser("limit@example.com")
		cam := strconv.FormatInt(e.camera(clientID), 10)
		paths := []struct{ name, method, path, field string }{
			{"create client", "POST", op("/api/v1/clients"), "name"},
			{"create user", "POST", op("/api/v1/clients/" + strconv.FormatInt(clientID, 10) + "/users"), "name"},
			{"create camera", "POST", op("/api/v1/cameras"), "description"},
			{"update camera", "PUT", op("/api/v1/cameras/" + cam), "description"},
			{"create video", "POST", "/v2/api/drives?token=" + tok, "description"},
		}
		// jsonOf returns {"<field>": "aaa…"} of exactly size bytes.
		jsonOf := func(field string, size int) []byte {
			return []byte(`{"` + field + `":"` + strings.Repeat("a", size-len(`{"`+field+`":""}`)) + `"}`)
		}
		var mp bytes.Buffer
		mw := multipart.NewWriter(&mp)
		_ = mw.WriteField("description", strings.Repeat("a", limit))
		_ = mw.Close()
		bodies := []struct {
			name, ct string
			body     []byte
			chunked  bool
		}{
			{"json", "application/json", jsonOf("description", limit+1), false},
			{"json chunked", "application/json", jsonOf("description", limit+1), true},
			{"json 1 MiB", "application/json", jsonOf("description", 1<<20), false},
			{"no content type", "", jsonOf("description", limit+1), false},
			{"form", "application/x-www-form-urlencoded", []byte("description=" + strings.Repeat("a", limit)), false},
			{"form chunked", "application/x-www-form-urlencoded", []byte("description=" + strings.Repeat("a", limit)), true},
			{"multipart", mw.FormDataContentType(), mp.Bytes(), false},
		}
		for _, p := range paths {
			for _, b := range bodies {
				r, err := e.rawRequest(p.method, p.path, b.ct, b.body, b.chunked)
				if err != nil {
					t.Errorf("%s, %s: %v", p.name, b.name, err)
					continue
				}
				wantErrorBody(t, p.name+", "+b.name, r, http.StatusRequestEntityTooLarge)
			}
			// Exactly the limit is read: the description is then too long (422).
			r, err := e.rawRequest(p.method, p.path, "application/json", jsonOf(p.field, limit), false)
			if err != nil {
				t.Fatal(err)
			}
			wantFieldError(t, p.name+", body of the limit", r, p.field)
		}
		// Many oversized bodies at once, then normal requests.
		var wg sync.WaitGroup
		errs := make(chan string, 16)
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := e.rawRequest("POST", op("/api/v1/cameras"), "application/json", jsonOf("description", 1<<20), i%2 == 0)
				if err != nil {
					errs <- err.Error()
				} else if r.status != http.StatusRequestEntityTooLarge {
					errs <- fmt.Sprintf("status %d", r.status)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Errorf("concurrent oversized body: %s", msg)
		}
		e.do("POST", op("/api/v1/cameras"), rtspCamera(clientID, "203.0.113.7")).want(t, 201)
		e.do("GET", "/api/v4/cameras?token="+tok, nil).want(t, 200)
	})
}

// hostile are text values that must be stored and returned as text: none
// has white space at its ends (text fields are trimmed) and none is longer
// than 64 characters (the shortest text field).
var hostile = []string{
	"Câmera Ñandú — 北京 東京 서울 Ελλάδα",
	"كاميرا المدخل \u202eevil\u202c שער \u200fד",
	"📷🎥 👩\u200d👩\u200d👧\u200d👦 🏳️\u200d🌈 \U0001F9EA✓",
	"a\x01b\x07c\x1b[31md\x7fe\tf\ng\rh\u0085i\u2028j\ufeffk\u00a0l",
	"'; DROP TABLE cameras; --",
	"Robert'); DROP TABLE clients;-- \" OR 1=1 /*",
	"<script>alert(1)</script>",
	"\"><img src=x onerror=alert(document.cookie)>",
	"{{.}} {{template \"x\"}} ${7*7} #{7*7} %s%n%x",
	"../../etc/passwd",
	"..\\..\\windows\\win.ini %2e%2e%2f %00 &lt;b&gt;",
	"\\u0000 \\x00 \\' \\\" $1 $$ ` `rm -rf /` && ;",
}

// wantJSONText fails unless r is JSON served as such.
func wantJSONText(t *testing.T, what string, r resp) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s: Content-Type %q, X-Content-Type-Options %q", what, ct, r.header.Get("X-Content-Type-Options"))
	}
}

// same fails unless each got equals want.
func same(t *testing.T, what, want string, got map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if got[k] != want {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], want)
		}
	}
}

// TestUnicodeAndInjectionStored puts multi-byte, right-to-left, emoji,
// control-character, SQL, HTML, template and path-traversal text in every
// text field of clients, users, cameras and downloadable videos: each is
// stored as given (read back from the database) and returned byte for byte
// in the JSON of the create, update, listing and single-read responses;
// the other rows stay intact and listable.
func TestUnicodeAndInjectionStored(t *testing.T) {
	eachLoggedEnv(t, nil, func(t *testing.T, e *env) {
		ctx := context.Background()
		secret := testKeys
		controlClient, _, _ := e.clientWithUser("control@example.com")
		controlCam := e.camera(controlClient)
		start := e.clock.Now().Add(-10 * time.Minute).UnixMilli()
		for i, s := range hostile {
			if n := utf8.RuneCountInString(s); n > maxShort || strings.TrimSpace(s) != s {
				t.Fatalf("hostile %d: %d characters or white space at its ends", i, n)
			}
			what := fmt.Sprintf("hostile %d (%q)", i, s)
			// Client and its first user: every text field.
			email := fmt.Sprintf("o'neil+%d{x}@example.com", i)
			r := e.do("POST", op("/api/v1/clients"), map[string]any{
				"name": s, "document_type": 2, "document_number": cnpj(), "phone": s, "cep": s, "address": s,
				"address_number": s, "address_comp": s, "address_nh": s, "city": s, "state": s,
				"users": []any{map[string]any{"name": s, "email": email, "phone": s, "user_type": 2,
					"password": "pw-" + s, "password_conf": "pw-" + s}},
			}).want(t, 201)
			wantJSONText(t, what, r)
			var clients []map[string]any
			if err := json.Unmarshal(r.body, &clients); err != nil || len(clients) != 1 {
				t.Fatalf("%s: client: %s", what, r.body)
			}
			cl := clients[0]
			same(t, what+" client", s, cl, "name", "phone", "cep", "address", "address_number", "address_comp", "address_nh", "city", "state")
			u := cl["users"].([]any)[0].(map[string]any)
			same(t, what+" user", s, u, "name", "phone")
			if u["email"] != email {
				t.Errorf("%s: email %q", what, u["email"])
			}
			clientID, userID := int64(cl["id"].(float64)), int64(u["id"].(float64))
			tok := u["api_token"].(string)
			row, err := e.db.Client(ctx, clientID)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{row.Name, row.Phone, row.CEP, row.Address, row.AddressNumber, row.AddressComp, row.AddressNH, row.City, row.State} {
				if v != s {
					t.Errorf("%s: client stored as %q", what, v)
				}
			}
			if ur, err := e.db.User(ctx, userID); err != nil || ur.Name != s || ur.Phone != s {
				t.Errorf("%s: user stored as %+v, %v", what, ur, err)
			}
			// The password is kept as given too: the token request takes it.
			e.do("POST", "/api/v1/auth/token", map[string]any{"email": email, "password": "pw-" + s}).want(t, 200)
			// A second user of the client.
			r = e.do("POST", op("/api/v1/clients/"+strconv.FormatInt(clientID, 10)+"/users"), map[string]any{
				"name": s, "email": fmt.Sprintf("second+%d@example.com", i), "phone": s, "user_type": 1,
				"password": "password1", "password_conf": "password1"}).want(t, 201)
			var users []map[string]any
			if err := json.Unmarshal(r.body, &users); err != nil || len(users) != 1 {
				t.Fatalf("%s: user: %s", what, r.body)
			}
			same(t, what+" second user", s, users[0], "name", "phone")

			// An RTSP camera (description, address, user, password) and a P2P
			// camera (serial, password).
			rc := rtspCamera(clientID, "203.0.113.7")
			rc["description"], rc["camera_address"], rc["user"], rc["pass"] = s, s, s, s
			r = e.do("POST", op("/api/v1/cameras"), rc).want(t, 201)
			wantJSONText(t, what, r)
			var created []map[string]any
			if err := json.Unmarshal(r.body, &created); err != nil || len(created) != 1 {
				t.Fatalf("%s: camera: %s", what, r.body)
			}
			same(t, what+" created camera", s, created[0], "description")
			rtspID := int64(created[0]["id"].(float64))
			c, err := e.db.Camera(ctx, rtspID)
			if err != nil {
				t.Fatal(err)
			}
			if c.Description != s || c.CameraAddress != s || c.User != s {
				t.Errorf("%s: camera stored as %q %q %q", what, c.Description, c.CameraAddress, c.User)
			}
			if raw, err := camera.Open(secret, c.SealedURL); err != nil {
				t.Errorf("%s: sealed url: %v", what, err)
			} else if su, err := url.Parse(raw); err != nil || su.User.Username() != s || su.Hostname() != "203.0.113.7" {
				t.Errorf("%s: camera URL %q: %v", what, raw, err)
			} else if p, _ := su.User.Password(); p != s {
				t.Errorf("%s: camera password %q", what, p)
			}
			pc := p2pCamera(clientID)
			pc["description"], pc["camera_address"], pc["p2p_serial_number"], pc["p2p_password"] = s, s, s, s
			r = e.do("POST", op("/api/v1/cameras"), pc).want(t, 201)
			if err := json.Unmarshal(r.body, &created); err != nil || len(created) != 1 {
				t.Fatalf("%s: p2p camera: %s", what, r.body)
			}
			p2pID := int64(created[0]["id"].(float64))
			if c, err := e.db.Camera(ctx, p2pID); err != nil || c.P2PSerial != s {
				t.Errorf("%s: p2p serial stored as %q, %v", what, c.P2PSerial, err)
			} else if p, err := camera.Open(secret, c.SealedP2PPassword); err != nil || p != s {
				t.Errorf("%s: p2p password stored as %q, %v", what, p, err)
			}
			// Listing and single read.
			r = e.do("GET", "/api/v4/cameras?token="+tok, nil).want(t, 200)
			wantJSONText(t, what, r)
			list := r.obj(t)["data"].([]any)
			if len(list) != 2 {
				t.Fatalf("%s: listing: %s", what, r.body)
			}
			for _, item := range list {
				same(t, what+" listed camera", s, item.(map[string]any), "description", "address")
			}
			rtsp := strconv.FormatInt(rtspID, 10)
			r = e.do("GET", "/api/camera-player/"+rtsp+"?token="+tok, nil).want(t, 200)
			wantJSONText(t, what, r)
			same(t, what+" camera read", s, r.obj(t), "description", "address")
			// Update: the next hostile text replaces it.
			s2 := hostile[(i+1)%len(hostile)]
			rc["description"], rc["camera_address"] = s2, s2
			r = e.do("PUT", op("/api/v1/cameras/"+rtsp), rc).want(t, 201)
			if err := json.Unmarshal(r.body, &created); err != nil || len(created) != 1 {
				t.Fatalf("%s: update: %s", what, r.body)
			}
			same(t, what+" updated camera", s2, created[0], "description")
			same(t, what+" camera read after update", s2, e.do("GET", "/api/camera-player/"+rtsp+"?token="+tok, nil).want(t, 200).obj(t), "description", "address")

			// Downloadable videos: description in a JSON body and in the query.
			r = e.do("POST", "/v2/api/drives?token="+tok, map[string]any{"camera_id": rtspID, "start_at": start,
				"end_at": start + 60000, "description": s}).want(t, 200)
			wantJSONText(t, what, r)
			data := r.obj(t)["data"].(map[string]any)
			same(t, what+" video", s, data, "description")
			same(t, what+" video", s2, data, "camera_name")
			q := url.Values{"token": {tok}, "camera_id": {rtsp}, "start_at": {strconv.FormatInt(start, 10)},
				"end_at": {strconv.FormatInt(start+1000, 10)}, "description": {s}}
			e.do("POST", "/v2/api/drives?"+q.Encode(), nil).want(t, 200)
			r = e.do("GET", "/v2/api/drives?token="+tok, nil).want(t, 200)
			wantJSONText(t, what, r)
			videos := r.obj(t)["data"].([]any)
			if len(videos) != 2 {
				t.Fatalf("%s: videos: %s", what, r.body)
			}
			for _, v := range videos {
				same(t, what+" listed video", s, v.(map[string]any), "description")
				same(t, what+" listed video", s2, v.(map[string]any), "camera_name")
			}
		}
		// Injection in the query parameters that are parsed: refused, not run.
		for _, p := range []string{
			"/v2/api/drives?token=" + testOperator + "&ids=" + url.QueryEscape("1);DROP TABLE videos;--"),
			"/api/v4/cameras?token=" + testOperator + "&page=" + url.QueryEscape("1 OR 1=1"),
			"/api/v1/events?token=" + testOperator + "&start_at=2025-03-01&end_at=2025-03-31&camera=" + url.QueryEscape("1' OR '1'='1"),
			"/api/v1/events?token=" + testOperator + "&start_at=" + url.QueryEscape("2025-03-01'--") + "&end_at=2025-03-31",
		} {
			if r := e.do("GET", p, nil); r.status < 400 || r.status >= 500 {
				t.Errorf("GET %s: %d: %s", p, r.status, r.body)
			}
		}
		// The database is intact: every camera listed, the control rows as made.
		n := 1 + 2*len(hostile)
		r := e.do("GET", op("/api/v4/cameras"), nil).want(t, 200)
		if total := r.obj(t)["total"]; total != float64(n) {
			t.Errorf("listing total %v, want %d", total, n)
		}
		seen := 0
		for page := 1; page <= (n+camerasPerPage-1)/camerasPerPage; page++ {
			r := e.do("GET", op("/api/v4/cameras?page="+strconv.Itoa(page)), nil).want(t, 200)
			seen += len(r.obj(t)["data"].([]any))
		}
		if seen != n {
			t.Errorf("listed %d cameras, want %d", seen, n)
		}
		same(t, "control camera", "Cam", e.do("GET", op("/api/camera-player/"+strconv.FormatInt(controlCam, 10)), nil).want(t, 200).obj(t), "description")
		if cl, err := e.db.Client(ctx, controlClient); err != nil || cl.Name != "Client control@example.com" || cl.Address != "Rua A" {
			t.Errorf("control client: %+v, %v", cl, err)
		}
		r = e.do("GET", op("/v2/api/drives"), nil).want(t, 200)
		if n := len(r.obj(t)["data"].([]any)); n != 2*len(hostile) {
			t.Errorf("videos listed %d, want %d", n, 2*len(hostile))
		}
	})
}

// TestPlayerEscapesDescription: the player page of a camera whose
// description is HTML shows it escaped; the raw markup appears nowhere.
func TestPlayerEscapesDescription(t *testing.T) {
	eachLoggedEnv(t, nil, func(t *testing.T, e *env) {
		clientID, _, tok := e.clientWithUser("player@example.com")
		desc := `<script>alert(1)</script>"'><img src=x onerror=alert(2)>{{.}}</title><svg onload=alert(3)>`
		rc := rtspCamera(clientID, "203.0.113.7")
		rc["description"] = desc
		r := e.do("POST", op("/api/v1/cameras"), rc).want(t, 201)
		var created []struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(r.body, &created); err != nil || len(created) != 1 {
			t.Fatalf("camera: %s", r.body)
		}
		id := strconv.FormatInt(created[0].ID, 10)
		for _, p := range []string{
			"/api/camera/" + id + "/player?player_digest=" + e.digest(PurposePlayer, created[0].ID),
			"/api/camera/" + id + "/player?token=" + tok,
			"/api/camera/" + id + "/player?token=" + tok + "&footer=0&controls=0",
		} {
			r := e.do("GET", p, nil).want(t, 200)
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Fatalf("%s: Content-Type %q", p, ct)
			}
			page := string(r.body)
			for _, raw := range []string{"<script>alert", "<img src=x", "<svg onload", "</title><svg", `"'><img`} {
				if strings.Contains(page, raw) {
					t.Errorf("%s: page holds the raw %q", p, raw)
				}
			}
			if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
				t.Errorf("%s: the escaped description is not in the page", p)
			}
		}
	})
}
