package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/status"
)

func TestCamerasCommand(t *testing.T) {
	b := startNATS(t)
	ctx := context.Background()
	for _, id := range []string{"cam-10", "cam-2", "7"} {
		if err := b.PutCamera(ctx, camera.Config{ID: id, ConnectionType: camera.RTSP, SealedURL: "sealed"}); err != nil {
			t.Fatal(err)
		}
	}
	o := bus.NewOutbox(b, 0, nil)
	for _, s := range []status.Status{
		{Camera: "cam-2", Code: status.Online, Width: 1280, Height: 720, Node: "rec-1", Since: time.Now()},
		{Camera: "7", Code: status.Permanent, LastError: "401 unauthorized",
			Reason: status.CauseCameraAuth, ReasonDetail: "bad credentials", Since: time.Now()},
	} {
		if err := o.EnqueueStatus(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	o.Close()
	lease, _ := json.Marshal(cluster.Lease{Node: "rec-1", TakenAt: time.Now()})
	if _, err := b.KVCreate(ctx, bus.BucketAssign, "cam-2", lease); err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	if code := run([]string{"cameras", "--nats.url", b.ClientURL()}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("output:\n%s", out.String())
	}
	for i, want := range []string{"CAMERA", "7 ", "cam-2 ", "cam-10 ", "3 cameras: 1 -, 1 ERRO PERMANENTE, 1 ONLINE"} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], want)
		}
	}
	for _, f := range []string{"ONLINE", "rec-1", "1280x720"} {
		if !strings.Contains(lines[2], f) {
			t.Errorf("cam-2 line %q lacks %q", lines[2], f)
		}
	}
	if !strings.Contains(lines[1], `"401 unauthorized"`) {
		t.Errorf("camera 7 line %q lacks its error", lines[1])
	}
	if !strings.Contains(lines[1], "camera_auth (bad credentials)") {
		t.Errorf("camera 7 line %q lacks its status reason", lines[1])
	}

	out.Reset()
	if code := run([]string{"cameras", "--json", "--nats.url", b.ClientURL()}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []cameraRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(rows) != 3 || rows[1].ID != "cam-2" || rows[1].Code != 1 || rows[1].Lease != "rec-1" {
		t.Errorf("rows = %+v", rows)
	}

	// A stopped NATS is an error that names it.
	u := b.ClientURL()
	b.Close()
	errb.Reset()
	if code := run([]string{"cameras", "--nats.url", u}, &out, &errb); code != 1 || !strings.Contains(errb.String(), u) {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

func TestIDLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"2", "10", true}, {"10", "2", false}, {"9", "cam", true}, {"cam-2", "cam-10", true}, {"a", "b", true}, {"cam-10", "cam-2", false},
	} {
		if got := idLess(tc.a, tc.b); got != tc.want {
			t.Errorf("idLess(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}
