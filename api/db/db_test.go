package db

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMigrateTwice(t *testing.T) {
	eachDB(t, func(t *testing.T, d *DB) {
		ctx := context.Background()
		if err := d.migrate(ctx); err != nil {
			t.Fatal(err)
		}
		v, err := d.Version(ctx)
		if err != nil || v != len(migrations) {
			t.Fatalf("version %d, %v; want %d", v, err, len(migrations))
		}
	})
}

func TestOpenRefusesUnknownURL(t *testing.T) {
	_, err := Open(context.Background(), "mysql://x:secret@h/db", "")
	if !errors.Is(err, ErrURL) {
		t.Fatalf("err %v, want ErrURL", err)
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Fatalf("error leaks the password: %v", err)
	}
}

func TestDefaultSQLiteUnderDataDir(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(context.Background(), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Dialect() != SQLite || d.Describe() != "sqlite:"+filepath.Join(dir, "vigia.db") {
		t.Fatalf("got %s %s", d.Dialect(), d.Describe())
	}
}

func newClient(doc string, at time.Time) Client {
	return Client{Name: "Acme", DocumentType: 2, DocumentNumber: doc, Phone: "1", CEP: "2", Address: "a",
		AddressNumber: "1", AddressNH: "b", City: "c", State: "SP", CreatedAt: at}
}

func TestClientsUsersTokens(t *testing.T) {
	eachDB(t, func(t *testing.T, d *DB) {
		ctx := context.Background()
		now := time.UnixMilli(1700000000123)
		c, users, err := d.CreateClient(ctx, newClient("11222333000181", now), []NewUser{
			{User: User{UserType: 2, Name: "Ana", Email: "ana@example.com", Phone: "9", PasswordHash: "h", CreatedAt: now}, TokenHash: "t1"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.ID == 0 || len(users) != 1 || users[0].ID == 0 || users[0].ClientID != c.ID {
			t.Fatalf("ids: %+v %+v", c, users)
		}
		_, _, err = d.CreateClient(ctx, newClient("11222333000181", now), nil)
		if !errors.Is(err, ErrDuplicate) {
			t.Fatalf("duplicate document: %v", err)
		}
		_, err = d.CreateUser(ctx, NewUser{User: User{ClientID: c.ID, UserType: 1, Name: "B", Email: "ana@example.com", CreatedAt: now}})
		if !errors.Is(err, ErrDuplicate) {
			t.Fatalf("duplicate email: %v", err)
		}
		u, cl, err := d.UserByToken(ctx, "t1")
		if err != nil || u.Email != "ana@example.com" || cl.ID != c.ID || !u.CreatedAt.Equal(now) {
			t.Fatalf("by token: %+v %+v %v", u, cl, err)
		}
		if err := d.AddToken(ctx, u.ID, "t2", now); err != nil {
			t.Fatal(err)
		}
		if u2, _, err := d.UserByToken(ctx, "t2"); err != nil || u2.ID != u.ID {
			t.Fatalf("second token: %v", err)
		}
		if _, _, err := d.UserByToken(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown token: %v", err)
		}
		if err := d.SetUserBlocked(ctx, u.ID, true, 0, now); err != nil {
			t.Fatal(err)
		}
		if u, _ := d.User(ctx, u.ID); !u.Blocked {
			t.Fatal("user not blocked")
		}
		if err := d.SetUserBlocked(ctx, 999, true, 0, now); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown user: %v", err)
		}
		if err := d.SetClientBlocked(ctx, c.ID, true, now); err != nil {
			t.Fatal(err)
		}
		if c2, err := d.ClientByDocument(ctx, "11222333000181"); err != nil || !c2.Blocked {
			t.Fatalf("client blocked: %+v %v", c2, err)
		}
	})
}

func TestCamerasVideosEvents(t *testing.T) {
	eachDB(t, func(t *testing.T, d *DB) {
		ctx := context.Background()
		now := time.UnixMilli(1700000000000)
		c1, _, err := d.CreateClient(ctx, newClient("1", now), nil)
		if err != nil {
			t.Fatal(err)
		}
		c2, _, _ := d.CreateClient(ctx, newClient("2", now), nil)
		var ids []int64
		for i := 0; i < 12; i++ {
			owner := c1.ID
			if i%3 == 0 {
				owner = c2.ID
			}
			cam, err := d.CreateCamera(ctx, Camera{ClientID: owner, Description: "cam", HistoryDays: 7, CreatedAt: now})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, cam.ID)
		}
		page, total, err := d.Cameras(ctx, c1.ID, 5, 5)
		if err != nil || total != 8 || len(page) != 3 {
			t.Fatalf("page: %d of %d, %v", len(page), total, err)
		}
		cam, _ := d.Camera(ctx, ids[1])
		cam.Description, cam.UpdatedAt = "renamed", now.Add(time.Second)
		if err := d.UpdateCamera(ctx, cam); err != nil {
			t.Fatal(err)
		}
		if got, _ := d.Camera(ctx, ids[1]); got.Description != "renamed" {
			t.Fatalf("update: %+v", got)
		}
		if err := d.UpdateCamera(ctx, Camera{ID: 9999}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("update unknown: %v", err)
		}
		n := 0
		if err := d.AllCameras(ctx, func(Camera, bool) error { n++; return nil }); err != nil || n != 12 {
			t.Fatalf("all: %d %v", n, err)
		}

		v, err := d.CreateVideo(ctx, Video{CameraID: ids[1], ClientID: c1.ID, Description: "v", StartMs: 1, EndMs: 2, CreatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
		v2, _ := d.CreateVideo(ctx, Video{CameraID: ids[0], ClientID: c2.ID, Description: "w", CreatedAt: now})
		vs, err := d.Videos(ctx, c1.ID, nil, 100)
		if err != nil || len(vs) != 1 || vs[0].ID != v.ID {
			t.Fatalf("videos: %+v %v", vs, err)
		}
		if vs, _ := d.Videos(ctx, 0, []int64{v2.ID}, 100); len(vs) != 1 || vs[0].ID != v2.ID {
			t.Fatalf("videos by id: %+v", vs)
		}
		if err := d.SetVideoStatus(ctx, v.ID, VideoReady, now); err != nil {
			t.Fatal(err)
		}
		if got, _ := d.Video(ctx, v.ID); got.Status != VideoReady {
			t.Fatalf("status %d", got.Status)
		}
		if err := d.DeleteVideo(ctx, v.ID); err != nil {
			t.Fatal(err)
		}
		if err := d.DeleteVideo(ctx, v.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("delete twice: %v", err)
		}

		for i := 0; i < 40; i++ {
			e := Event{UID: "ev-" + string(rune('a'+i%26)) + string(rune('a'+i/26)), CameraID: ids[1], ClientID: c1.ID, Type: []int{1, 5}[i%2], At: now.Add(time.Duration(i) * time.Minute)}
			added, err := d.AddEvent(ctx, e, now)
			if err != nil || !added {
				t.Fatalf("add %d: %v %v", i, added, err)
			}
			if added, err := d.AddEvent(ctx, e, now); err != nil || added {
				t.Fatalf("add again %d: %v %v", i, added, err)
			}
		}
		evs, total, err := d.Events(ctx, EventFilter{ClientID: c1.ID, Types: []int{5}, From: now, To: now.Add(time.Hour), Limit: 30})
		if err != nil || total != 20 || len(evs) != 20 || evs[0].Type != 5 || evs[0].CameraDescription != "renamed" {
			t.Fatalf("events: %d of %d %v", len(evs), total, err)
		}
		if !evs[0].At.After(evs[1].At) {
			t.Fatal("events not newest first")
		}
		if _, total, _ := d.Events(ctx, EventFilter{ClientID: c2.ID, From: now, To: now.Add(time.Hour), Limit: 30}); total != 0 {
			t.Fatalf("other client sees %d events", total)
		}
	})
}
