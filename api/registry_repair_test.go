package api

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/testenv"
)

// flakyRegistry is the real registry whose writes fail while fail is set,
// as they do when NATS is unreachable after the database write.
type flakyRegistry struct {
	Registry
	fail atomic.Bool
}

var errRegistryDown = errors.New("registry unreachable (test)")

func (f *flakyRegistry) PutCamera(ctx context.Context, c camera.Config) error {
	if f.fail.Load() {
		return errRegistryDown
	}
	return f.Registry.PutCamera(ctx, c)
}

func (f *flakyRegistry) DeleteCamera(ctx context.Context, id string) error {
	if f.fail.Load() {
		return errRegistryDown
	}
	return f.Registry.DeleteCamera(ctx, id)
}

// flakyEnv is an env whose registry writes fail on demand.
func flakyEnv(t *testing.T, kind string) (*env, *flakyRegistry) {
	fr := &flakyRegistry{}
	e := newEnv(t, kind, func(c *Config) { fr.Registry = c.Registry; c.Registry = fr })
	return e, fr
}

// record reads camera id's registry record and opens its sealed URL.
func (e *env) record(id string) (camera.Config, string, bool) {
	e.t.Helper()
	c, ok, err := e.bus.GetCamera(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	u, err := camera.Open(testKeys, c.SealedURL)
	if err != nil {
		e.t.Fatalf("record %s: sealed url: %v", id, err)
	}
	return c, u, ok
}

// putRaw writes a registry record as another writer would.
func (e *env) putRaw(c camera.Config) {
	e.t.Helper()
	if err := e.bus.PutCamera(context.Background(), c); err != nil {
		e.t.Fatal(err)
	}
}

// revision is the revision of the registry record of id.
func (e *env) revision(id string) uint64 {
	e.t.Helper()
	_, rev, err := e.bus.KVGet(context.Background(), bus.BucketCameras, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return rev
}

// TestRepairRegistry (embedded NATS, SQLite and PostgreSQL): an edit and a
// block whose registry writes failed after the database writes are
// repaired by the next pass, without a restart; a record the same in
// content but sealed anew is not rewritten; records of API ids the
// database lacks are removed; trusted (static) records and records outside
// the API's id space are left alone.
func TestRepairRegistry(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			e, fr := flakyEnv(t, kind)
			ctx := t.Context()
			clientID, _, _ := e.clientWithUser("repair@example.com")
			id := e.camera(clientID)
			c := camID(id)
			if _, u, ok := e.record(c); !ok || u != "rtsp://admin:p%40ss%3Aword@203.0.113.7:554/Streaming/Channels/101" {
				t.Fatalf("record after create: %v %q", ok, u)
			}

			// An edit whose registry write fails: 503, the database has the
			// edit, the registry the old record.
			fr.fail.Store(true)
			edit := rtspCamera(clientID, "203.0.113.9")
			edit["history_days"] = 30
			e.do("PUT", op("/api/v1/cameras/"+c), edit).want(t, 503)
			fr.fail.Store(false)
			if rec, _, _ := e.record(c); rec.HistoryDays != 7 {
				t.Fatalf("the failed write reached the registry: %+v", rec)
			}
			rep, err := e.srv.RepairRegistry(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rec, u, ok := e.record(c)
			if !ok || rec.HistoryDays != 30 || u != "rtsp://admin:p%40ss%3Aword@203.0.113.9:554/Streaming/Channels/101" || rec.Trusted {
				t.Fatalf("record after repair: %+v %q (repair %+v)", rec, u, rep)
			}
			if rep.Put != 1 || rep.Removed != 0 {
				t.Fatalf("repair %+v, want one put", rep)
			}

			// The same content sealed anew (another nonce) is not a
			// difference: nothing is written.
			resealed := rec
			if resealed.SealedURL, err = camera.Seal(testKeys, u); err != nil {
				t.Fatal(err)
			}
			e.putRaw(resealed)
			rev := e.revision(c)
			if rep, err = e.srv.RepairRegistry(ctx); err != nil || rep.Put != 0 || rep.Removed != 0 || e.revision(c) != rev {
				t.Fatalf("re-sealed record rewritten: %+v %v (revision %d, was %d)", rep, err, e.revision(c), rev)
			}
			// A record sealed with another secret, or with other content,
			// is rewritten.
			other := rec
			other.SealedURL, _ = camera.Seal(mustKeys([]byte("another-secret-0123456789abcdef0")), u)
			e.putRaw(other)
			if rep, err = e.srv.RepairRegistry(ctx); err != nil || rep.Put != 1 {
				t.Fatalf("record of another secret: %+v %v", rep, err)
			}
			other = rec
			other.Width, other.HistoryDays = 1, 1
			e.putRaw(other)
			if rep, err = e.srv.RepairRegistry(ctx); err != nil || rep.Put != 1 {
				t.Fatalf("record of other content: %+v %v", rep, err)
			}
			if got, _, _ := e.record(c); got.HistoryDays != 30 || got.Width != 1280 {
				t.Fatalf("record after repair: %+v", got)
			}

			// Registry records the database does not have: an API id is
			// removed; static records and other ids stay.
			e.putRaw(camera.Config{ID: "9999", ConnectionType: camera.RTMP})
			e.putRaw(camera.Config{ID: "front-door", ConnectionType: camera.RTMP, Trusted: true})
			e.putRaw(camera.Config{ID: "9998", ConnectionType: camera.RTMP, Trusted: true})
			e.putRaw(camera.Config{ID: "not-api", ConnectionType: camera.RTMP})
			if rep, err = e.srv.RepairRegistry(ctx); err != nil || rep.Removed != 1 || rep.Put != 0 {
				t.Fatalf("repair of stray records: %+v %v", rep, err)
			}
			if _, ok, _ := e.bus.GetCamera(ctx, "9999"); ok {
				t.Fatal("record of an API id the database lacks is still there")
			}
			for _, keep := range []string{"front-door", "9998", "not-api"} {
				if _, ok, _ := e.bus.GetCamera(ctx, keep); !ok {
					t.Fatalf("record %s was removed", keep)
				}
			}

			// A trusted record under a database camera's id is left alone.
			id2 := e.camera(clientID)
			c2 := camID(id2)
			static := camera.Config{ID: c2, ConnectionType: camera.RTMP, HistoryDays: 2, Trusted: true}
			e.putRaw(static)
			if rep, err = e.srv.RepairRegistry(ctx); err != nil || rep.Trusted != 1 || rep.Put != 0 {
				t.Fatalf("repair with a trusted record under an API id: %+v %v", rep, err)
			}
			if got, _, _ := e.bus.GetCamera(ctx, c2); got != static {
				t.Fatalf("trusted record changed: %+v", got)
			}
			e.putRaw(camera.Config{ID: c2, ConnectionType: camera.RTMP}) // as if never static
			if rep, err = e.srv.RepairRegistry(ctx); err != nil || rep.Put != 1 {
				t.Fatalf("repair: %+v %v", rep, err)
			}

			// A block whose registry deletes fail: the records stay until
			// the next pass removes them; the unblock likewise.
			doc := clientDocument(t, e, clientID)
			fr.fail.Store(true)
			e.do("GET", "/api/client/block/"+testOperator+"/"+doc, nil).want(t, 500)
			fr.fail.Store(false)
			if _, _, ok := e.record(c); !ok {
				t.Fatal("the failed delete reached the registry")
			}
			if rep, err = e.srv.RepairRegistry(ctx); err != nil || rep.Removed != 2 {
				t.Fatalf("repair after a block: %+v %v", rep, err)
			}
			for _, id := range []string{c, c2} {
				if _, ok, _ := e.bus.GetCamera(ctx, id); ok {
					t.Fatalf("camera %s of a blocked client still registered", id)
				}
			}
			fr.fail.Store(true)
			e.do("GET", "/api/client/unblock/"+testOperator+"/"+doc, nil).want(t, 500)
			fr.fail.Store(false)
			if rep, err = e.srv.RepairRegistry(ctx); err != nil || rep.Put != 2 {
				t.Fatalf("repair after an unblock: %+v %v", rep, err)
			}
			if rep, err = e.srv.RepairRegistry(ctx); err != nil || rep != (RegistryRepair{}) {
				t.Fatalf("a pass after the repair changed %+v %v", rep, err)
			}
		})
	}
}

// TestRepairRegistryPeriodic: with the periodic pass running, an edit whose
// registry write failed reaches the registry without a restart.
func TestRepairRegistryPeriodic(t *testing.T) {
	e, fr := flakyEnv(t, "sqlite")
	clientID, _, _ := e.clientWithUser("periodic@example.com")
	c := camID(e.camera(clientID))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // exits when the test cancels ctx
		defer close(done)
		e.srv.RunRegistryRepair(ctx, 50*time.Millisecond)
	}()
	t.Cleanup(func() { cancel(); <-done })
	fr.fail.Store(true)
	edit := rtspCamera(clientID, "203.0.113.9")
	edit["history_days"] = 15
	e.do("PUT", op("/api/v1/cameras/"+c), edit).want(t, 503)
	fr.fail.Store(false)
	testenv.WaitFor(t, 10*time.Second, "the edit in the registry", func() bool {
		rec, _, _ := e.record(c)
		return rec.HistoryDays == 15
	})
}

// clientDocument returns the document digits of client id.
func clientDocument(t *testing.T, e *env, id int64) string {
	t.Helper()
	cl, err := e.db.Client(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return cl.DocumentNumber
}
