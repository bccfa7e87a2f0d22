package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/vigia/vigia/camera"
)

// TestRotationReseals (SQLite and PostgreSQL, embedded NATS): after
// security.secret is rotated, the credentials sealed under the previous
// secret still open, digests handed out before the rotation keep working
// until the end of the overlap, and the registry repair seals every
// credential again under the new secret, in the database and in the
// registry, once: afterwards the new secret alone opens them all.
func TestRotationReseals(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		clientID, _, tok := e.clientWithUser("rotate@example.com")
		id := e.camera(clientID)
		c := camID(id)
		oldDigest := e.digest(PurposeDigest, id)

		newSecret := []byte("the-new-secret-0123456789abcdef")
		until := e.clock.Now().Add(2 * time.Hour)
		rotated, err := mustKeys(newSecret).WithPrevious(testSecret, until)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := New(Config{DB: e.db, Store: e.store, Registry: e.bus, Status: e.bus, Keys: rotated,
			OperatorTokens: []string{testOperator}, PasswordCost: bcrypt.MinCost, Now: e.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		e.srv = srv
		e.http = httptest.NewServer(srv.Handler()) // (the storage URLs are not read here)
		t.Cleanup(e.http.Close)

		// Before any repair: the old digest works during the overlap.
		ts := strconv.FormatInt(e.clock.Now().Unix(), 10)
		thumbs := "/api/camera/" + c + "/thumbs-hourly?token=" + tok + "&ts=" + ts + "&digest="
		e.do("GET", thumbs+oldDigest, nil).want(t, http.StatusOK)

		rep, err := srv.RepairRegistry(ctx)
		if err != nil || rep.Resealed != 1 || rep.Put != 1 {
			t.Fatalf("repair after the rotation: %+v %v, want one camera re-sealed and put", rep, err)
		}
		onlyNew := mustKeys(newSecret)
		row, err := e.db.Camera(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		rec, _, err := e.bus.GetCamera(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		for what, sealed := range map[string]string{"database": row.SealedURL, "registry": rec.SealedURL} {
			if u, err := camera.Open(onlyNew, sealed); err != nil || u != "rtsp://admin:p%40ss%3Aword@203.0.113.7:554/Streaming/Channels/101" {
				t.Errorf("%s after the repair: %q %v, want sealed under the new secret", what, u, err)
			}
		}
		if rep, err = srv.RepairRegistry(ctx); err != nil || rep.Resealed+rep.Put+rep.Removed != 0 {
			t.Fatalf("second repair: %+v %v, want nothing to do", rep, err)
		}

		// The new digest works; the old one until the end of the overlap.
		e.do("GET", thumbs+e.signDigest(onlyNew, PurposeDigest, id, e.clock.Now(), 0), nil).want(t, http.StatusOK)
		e.clock.Set(until.Add(-time.Second))
		e.do("GET", thumbs+oldDigest, nil).want(t, http.StatusOK)
		e.clock.Set(until)
		e.do("GET", thumbs+oldDigest, nil).want(t, http.StatusForbidden)
	})
}
