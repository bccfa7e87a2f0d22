package api

import (
	"net/url"
	"strconv"
	"testing"
	"time"
)

func TestClientsUsersAndTokens(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		// Auth: missing 401, a user token on a restricted operation 403.
		e.do("POST", "/api/v1/clients", map[string]any{}).want(t, 401)
		clientID, userID, tok := e.clientWithUser("ana@example.com")
		e.do("POST", "/api/v1/clients?token="+tok, map[string]any{}).want(t, 403)

		// 400 malformed, 415 unknown type, 413 too large.
		e.do("POST", op("/api/v1/clients"), `{"name":`).want(t, 400)
		e.do("POST", op("/api/v1/clients"), `[1,2]`).want(t, 400)
		big := make([]byte, 70<<10)
		for i := range big {
			big[i] = 'a'
		}
		e.do("POST", op("/api/v1/clients"), `{"name":"`+string(big)+`"}`).want(t, 413)

		// 422 names each bad field, nested users included.
		r := e.do("POST", op("/api/v1/clients"), map[string]any{"document_type": 1, "document_number": "529.982.247-24",
			"users": []any{map[string]any{"email": "x", "password": "password1", "password_conf": "other"}}}).want(t, 422)
		errs := r.obj(t)["errors"].(map[string]any)
		for _, f := range []string{"name", "phone", "cep", "address", "address_number", "address_nh", "city", "state",
			"document_number", "users.0.email", "users.0.name", "users.0.user_type", "users.0.password_conf"} {
			if _, ok := errs[f]; !ok {
				t.Errorf("422 does not name %s: %s", f, r.body)
			}
		}
		if _, ok := errs["address_comp"]; ok {
			t.Error("address_comp is optional")
		}

		// A form body with bracketed users, a CPF; the same e-mail is refused.
		form := url.Values{"name": {"Bob"}, "document_type": {"1"}, "document_number": {"529.982.247-25"}, "phone": {"1"},
			"cep": {"1"}, "address": {"a"}, "address_number": {"1"}, "address_nh": {"b"}, "city": {"c"}, "state": {"SP"},
			"users[0][name]": {"Bob"}, "users[0][email]": {"BOB@example.com"}, "users[0][phone]": {"2"}, "users[0][user_type]": {"1"},
			"users[0][password]": {"password2"}, "users[0][password_conf]": {"password2"}}
		r = e.do("POST", op("/api/v1/clients"), form).want(t, 201)
		cl := r.json(t).([]any)[0].(map[string]any)
		if cl["document_type"] != "1" || cl["document_number"] != "52998224725" {
			t.Fatalf("client record: %s", r.body)
		}
		u := cl["users"].([]any)[0].(map[string]any)
		if u["email"] != "bob@example.com" || u["user_type_id"] != float64(6) || u["api_token"] == "" {
			t.Fatalf("user record: %v", u)
		}
		if _, err := time.Parse(layoutDateTime, cl["created_at"].(string)); err != nil {
			t.Fatalf("created_at: %v", err)
		}
		e.do("POST", op("/api/v1/clients"), form).want(t, 422) // document and e-mail taken

		// Create client user: 201 without api_token; then a token by password.
		r = e.do("POST", op("/api/v1/clients/"+strconv.FormatInt(clientID, 10)+"/users"), map[string]any{
			"name": "Caio", "email": "caio@example.com", "phone": "3", "user_type": 1, "password": "password3", "password_conf": "password3"}).want(t, 201)
		caio := r.json(t).([]any)[0].(map[string]any)
		if _, has := caio["api_token"]; has {
			t.Fatal("create user returned an api_token")
		}
		e.do("POST", op("/api/v1/clients/999/users"), map[string]any{}).want(t, 404)
		e.do("POST", "/api/v1/auth/token", map[string]any{"email": "caio@example.com", "password": "wrong-pass"}).want(t, 401)
		r = e.do("POST", "/api/v1/auth/token", map[string]any{"email": "Caio@example.com", "password": "password3"}).want(t, 200)
		caioTok := r.obj(t)["api_token"].(string)
		e.do("GET", "/api/v4/cameras?token="+caioTok, nil).want(t, 200)

		// Block the user (by an ADMIN of the client): its token is refused at once.
		caioID := strconv.FormatInt(int64(caio["id"].(float64)), 10)
		e.do("GET", "/api/user/block/"+caioTok+"/"+strconv.FormatInt(userID, 10), nil).want(t, 403) // COMUM cannot block
		r = e.do("GET", "/api/user/block/"+tok+"/"+caioID, nil).want(t, 200)
		if m := r.obj(t); m["code"] != float64(0) || m["msg"] != "" {
			t.Fatalf("block: %s", r.body)
		}
		e.do("GET", "/api/v4/cameras?token="+caioTok, nil).want(t, 403)
		e.do("GET", "/api/user/unblock/"+tok+"/"+caioID, nil).want(t, 200)
		e.do("GET", "/api/v4/cameras?token="+caioTok, nil).want(t, 200)
		e.do("GET", "/api/user/block/not-a-token/"+caioID, nil).want(t, 401)

		// Block the client by document with the partner token.
		e.do("GET", "/api/client/block/"+tok+"/52998224725", nil).want(t, 403)
		e.do("GET", "/api/client/block/"+testOperator+"/00000000000", nil).want(t, 404)
		e.do("GET", "/api/client/block/"+testOperator+"/529.982", nil).want(t, 400)
		c, _ := e.db.Client(t.Context(), clientID)
		e.do("GET", "/api/client/block/"+testOperator+"/"+c.DocumentNumber, nil).want(t, 200)
		e.do("GET", "/api/v4/cameras?token="+tok, nil).want(t, 403)
		e.do("GET", "/api/client/unblock/"+testOperator+"/"+c.DocumentNumber, nil).want(t, 200)
		e.do("GET", "/api/v4/cameras?token="+tok, nil).want(t, 200)
	})
}

func TestTokenThrottle(t *testing.T) {
	e := newEnv(t, "sqlite", func(c *Config) { c.LoginAttempts = 3; c.LoginWindow = time.Minute })
	e.clientWithUser("dora@example.com")
	for i := 0; i < 3; i++ {
		e.do("POST", "/api/v1/auth/token", map[string]any{"email": "dora@example.com", "password": "nope-nope"}).want(t, 401)
	}
	r := e.do("POST", "/api/v1/auth/token", map[string]any{"email": "dora@example.com", "password": "password1"}).want(t, 429)
	if r.header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	e.clock.Set(e.clock.Now().Add(61 * time.Second))
	e.do("POST", "/api/v1/auth/token", map[string]any{"email": "dora@example.com", "password": "password1"}).want(t, 200)
}
