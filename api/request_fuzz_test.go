package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzReadInput feeds request bodies (JSON and form) to readInput: it must
// answer a value or an error, never panic.
func FuzzReadInput(f *testing.F) {
	for _, seed := range []struct{ ct, body string }{
		{"application/json", `{"name":"a","users":[{"email":"x@y.z"}]}`},
		{"application/json", `[1,2]`},
		{"application/json", `{"a":1}{"b":2}`},
		{"application/x-www-form-urlencoded", "users[0][name]=a&users[0][email]=b&users[1][name]=c"},
		{"application/x-www-form-urlencoded", "a[b][c][d][e][f]=1&x[]=1&x[]=2&y[=3"},
		{"application/x-www-form-urlencoded", "users[0]=a&users[0][x]=b"},
		{"text/plain", "hello"},
	} {
		f.Add(seed.ct, seed.body)
	}
	s := &Server{cfg: Config{BodyLimit: 1 << 16}}
	f.Fuzz(func(t *testing.T, ct, body string) {
		r := httptest.NewRequest(http.MethodPost, "/x?token=t&a[0]=1", strings.NewReader(body))
		r.Header.Set("Content-Type", ct)
		in, err := s.readInput(httptest.NewRecorder(), r)
		if err == nil && in == nil {
			t.Fatal("nil input without error")
		}
		if err == nil {
			f := newFields(in, fieldErrors{})
			f.str("name", true, 10)
			f.integer("page", false)
		}
	})
}
