package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/testenv/headless"
	"github.com/vigia/vigia/testenv/pgtest"
)

// pg is the PostgreSQL cluster the tests of this package share.
var pg *pgtest.Server

func TestMain(m *testing.M) {
	var err error
	pg, err = pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	pg.Close()
	headless.Close()
	os.Exit(code)
}

const testOperator = "operator-token-for-tests-0123456789"

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// recExporter records submitted jobs; its State is what the test sets.
type recExporter struct {
	mu      sync.Mutex
	jobs    []Job
	state   map[string]JobState
	removed []string
}

func (e *recExporter) Submit(_ context.Context, j Job) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.jobs = append(e.jobs, j)
	return nil
}

func (e *recExporter) Remove(_ context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removed = append(e.removed, id)
	return nil
}

func (e *recExporter) State(_ context.Context, id string) (JobState, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state[id], nil
}

// env is a Server over a real database, embedded NATS and an fs store.
type env struct {
	t     testing.TB
	srv   *Server
	http  *httptest.Server
	db    *db.DB
	bus   *bus.Bus
	store storage.Store
	clock *clock
	exp   *recExporter
}

// eachEnv runs fn against SQLite and PostgreSQL.
func eachEnv(t *testing.T, fn func(t *testing.T, e *env)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) { fn(t, newEnv(t, kind, nil)) })
	}
}

func newEnv(t testing.TB, kind string, mod func(*Config)) *env {
	t.Helper()
	ctx := context.Background()
	u := "sqlite:" + filepath.Join(t.TempDir(), "api.db")
	if kind == "postgres" {
		u = pg.NewDatabase(t)
	}
	d, err := db.Open(ctx, u, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	b, err := bus.Open(ctx, bus.Options{Listen: "127.0.0.1:0"}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	secret := testSecret
	e := &env{t: t, db: d, bus: b, clock: &clock{t: time.Date(2025, 3, 10, 15, 30, 0, 0, time.UTC)}, exp: &recExporter{state: map[string]JobState{}}}
	mux := http.NewServeMux()
	e.http = httptest.NewServer(mux)
	t.Cleanup(e.http.Close)
	st, err := fs.New(t.TempDir(), fs.Options{BaseURL: e.http.URL + "/media", Secret: secret, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.store = st
	mux.Handle("GET /media/", http.StripPrefix("/media", st.Handler()))
	cfg := Config{DB: d, Store: st, Registry: b, Status: b, Exporter: e.exp, Secret: secret,
		OperatorTokens: []string{testOperator}, PublicURL: e.http.URL, AllowPrivateNetworks: false,
		PasswordCost: bcrypt.MinCost, Now: e.clock.Now, BodyLimit: 64 << 10,
		// Tests that are not about the video bounds make videos freely.
		Videos: VideoLimits{RunningPerUser: 100, RunningPerClient: 100, PerUserHour: 1000, PerClientHour: 1000},
		Renditions: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("rendition of " + r.URL.Query().Get("key")))
		})}
	if mod != nil {
		mod(&cfg)
	}
	e.srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Register(mux)
	return e
}

// resp is a decoded response.
type resp struct {
	status int
	body   []byte
	header http.Header
}

func (r resp) json(t testing.TB) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("status %d, body not JSON: %v: %s", r.status, err, r.body)
	}
	return v
}

func (r resp) obj(t testing.TB) map[string]any {
	t.Helper()
	m, ok := r.json(t).(map[string]any)
	if !ok {
		t.Fatalf("body is not an object: %s", r.body)
	}
	return m
}

// do sends a request: body is JSON unless it is url.Values (form).
func (e *env) do(method, path string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case url.Values:
		rd, ct = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	case string:
		rd, ct = strings.NewReader(b), "application/json"
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd, ct = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequest(method, e.http.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, body: data, header: res.Header}
}

// want fails unless r has the status.
func (r resp) want(t testing.TB, status int) resp {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}

func op(path string) string {
	if strings.Contains(path, "?") {
		return path + "&token=" + testOperator
	}
	return path + "?token=" + testOperator
}

var docSeq = struct {
	sync.Mutex
	n int
}{}

// cnpj returns a fresh valid CNPJ.
func cnpj() string {
	docSeq.Lock()
	docSeq.n++
	n := docSeq.n
	docSeq.Unlock()
	base := fmt.Sprintf("%08d0001", 11222333+n*7)
	for _, k := range []int{12, 13} {
		w := []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}[13-k:]
		sum := 0
		for i := 0; i < k; i++ {
			sum += int(base[i]-'0') * w[i]
		}
		c := sum % 11
		if c < 2 {
			c = 0
		} else {
			c = 11 - c
		}
		base += string(rune('0' + c))
	}
	return base
}

// clientWithUser creates a client with one ADMIN user and returns the
// client id, user id and the user's api_token.
func (e *env) clientWithUser(email string) (clientID, userID int64, token string) {
	e.t.Helper()
	r := e.do("POST", op("/api/v1/clients"), map[string]any{
		"name": "Client " + email, "document_type": 2, "document_number": cnpj(), "phone": "11 5555-0000",
		"cep": "01000-000", "address": "Rua A", "address_number": "10", "address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "U", "email": email, "phone": "11", "user_type": 2, "password": "password1", "password_conf": "password1"}},
	}).want(e.t, 201)
	var out []struct {
		ID    int64 `json:"id"`
		Users []struct {
			ID       int64  `json:"id"`
			APIToken string `json:"api_token"`
		} `json:"users"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil || len(out) != 1 || len(out[0].Users) != 1 {
		e.t.Fatalf("client: %v %s", err, r.body)
	}
	return out[0].ID, out[0].Users[0].ID, out[0].Users[0].APIToken
}

// rtspCamera returns a valid RTSP camera payload of the client.
func rtspCamera(clientID int64, host string) map[string]any {
	return map[string]any{"description": "Cam", "camera_address": "Rua A, 10", "latitude": "-23.55", "longitude": "-46.63",
		"connection_type": 0, "resolution_id": 2, "history_days": 7, "client_id": clientID, "model_id": 3, "stream": "0",
		"dns": host, "port": "554", "user": "admin", "pass": "p@ss:word"}
}

// camera creates a camera of the client (public address) and returns its id.
func (e *env) camera(clientID int64) int64 {
	e.t.Helper()
	r := e.do("POST", op("/api/v1/cameras"), rtspCamera(clientID, "203.0.113.7")).want(e.t, 201)
	var out []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil || len(out) != 1 {
		e.t.Fatalf("camera: %s", r.body)
	}
	return out[0].ID
}

// testSecret is the secret of every env; testKeys its keys.
var (
	testSecret = []byte("test-secret-0123456789abcdef0123")
	testKeys   = mustKeys(testSecret)
)

func mustKeys(secret []byte) *sign.Keys {
	k, err := sign.New(secret)
	if err != nil {
		panic(err)
	}
	return k
}

// digest returns today's digest of the camera for purpose (parameter
// name); a player_digest is the operator's.
func (e *env) digest(purpose string, id int64) string {
	return e.signDigest(testKeys, purpose, id, e.clock.Now(), 0)
}

// signDigest returns the value of the digest parameter purpose of camera
// id as the server hands it out on day, under keys k, with the camera's
// and its client's current state; a player_digest is for user uid (0: the
// operator).
func (e *env) signDigest(k *sign.Keys, purpose string, id int64, day time.Time, uid int64) string {
	e.t.Helper()
	return e.signDigestAs(k, digestPurpose[purpose], purpose, id, day, uid)
}

// signDigestAs is signDigest with the signature made for purpose as
// instead of the parameter's own.
func (e *env) signDigestAs(k *sign.Keys, as sign.Purpose, purpose string, id int64, day time.Time, uid int64) string {
	e.t.Helper()
	ctx := context.Background()
	c, err := e.db.Camera(ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	cl, err := e.db.Client(ctx, c.ClientID)
	if err != nil {
		e.t.Fatal(err)
	}
	exp := e.srv.digestExpiry(day)
	if purpose != PurposePlayer {
		return k.Sign(as, exp, digestFields(c, cl)...)
	}
	v := viewer{id: uid}
	if uid != 0 {
		u, err := e.db.User(ctx, uid)
		if err != nil {
			e.t.Fatal(err)
		}
		v.gen = u.AccessGen
	}
	return itoa(uid) + "." + k.Sign(as, exp, playerFields(c, cl, v)...)
}

// put stores an object.
func (e *env) put(key string, body string) {
	e.t.Helper()
	if err := e.store.Put(context.Background(), key, strings.NewReader(body), int64(len(body)), storage.PutOptions{}); err != nil {
		e.t.Fatal(err)
	}
}
