package e2e

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestRTMPKeyRotation: an RTMP push camera created through the API records
// what a publisher pushes with its key; after POST
// /api/v1/cameras/{id}/push-key the session pushed with the old key ends,
// the old key is refused at once, and the new key records.
func TestRTMPKeyRotation(t *testing.T) {
	t.Parallel()
	a := startServeNode(t, "rotation", zap.NewNop())
	api := apiClient{t: t, base: a.URL()}
	op := "?token=" + apiOperator
	client := shape(t, "client", one(t, "client", api.call("POST", "/api/v1/clients"+op, map[string]any{
		"name": "Push", "document_type": 2, "document_number": "11222333000181", "phone": "1", "cep": "01000-000",
		"address": "R", "address_number": "1", "address_nh": "C", "city": "S", "state": "SP",
		"users": []any{map[string]any{"name": "P", "email": "push@example.com", "phone": "1", "user_type": 2, "password": "password1", "password_conf": "password1"}}}, 201)),
		map[string]string{"id": "number"})
	created := one(t, "camera", api.call("POST", "/api/v1/cameras"+op, map[string]any{"description": "Push", "camera_address": "a",
		"latitude": "1", "longitude": "1", "connection_type": 1, "resolution_id": 1, "history_days": 1, "client_id": client["id"]}, 201)).(map[string]any)
	cam := strconv.Itoa(int(created["id"].(float64)))
	testenv.WaitFor(t, 20*time.Second, "the push server listening", func() bool { return a.RTMPServer() != nil && a.RTMPServer().Addr() != "" })
	// The node's push address, with the key of the API's answer.
	withKey := func(rtmpURL string) string {
		k, err := url.Parse(rtmpURL)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(a.PushURL(cam))
		if err != nil {
			t.Fatal(err)
		}
		u.RawQuery = "key=" + k.Query().Get("key")
		return u.String()
	}
	oldURL := withKey(created["rtmp_url"].(string))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The publisher tries again, as an encoder does, while the camera is
	// not running yet on the node (refused) until the rotation is asked;
	// ended has how the session running then ended.
	ended := make(chan error, 1)
	var rotating atomic.Bool
	go func() {
		for {
			err := synth.PublishRTMP(ctx, oldURL, synth.RTMPStreamSpec{Small: true})
			if rotating.Load() || ctx.Err() != nil {
				ended <- err
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	st := a.Store()
	waitSegments(t, st, cam, 2, 60*time.Second)

	rotating.Store(true)
	rotated := shape(t, "rotation", api.call("POST", "/api/v1/cameras/"+cam+"/push-key"+op, nil, 200), map[string]string{"rtmp_url": "string"})
	newURL := withKey(rotated["rtmp_url"].(string))
	if newURL == oldURL {
		t.Fatal("the rotation kept the key")
	}
	rotatedAt := time.Now()
	select {
	case err := <-ended:
		t.Logf("the session pushed with the old key ended %v after the rotation: %v", time.Since(rotatedAt).Round(time.Millisecond), err)
	case <-time.After(20 * time.Second):
		t.Fatal("the session pushed with the old key still runs 20 s after the rotation")
	}
	tctx, tcancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := synth.PublishRTMP(tctx, oldURL, synth.RTMPStreamSpec{Small: true})
	tcancel()
	if !errors.Is(err, synth.ErrRTMPRefused) {
		t.Fatalf("the old key after the rotation: %v, want refused", err)
	}
	go func() { _ = synth.PublishRTMP(ctx, newURL, synth.RTMPStreamSpec{Small: true}) }()
	testenv.WaitFor(t, 60*time.Second, "a segment pushed with the new key", func() bool {
		for _, s := range segments(t, st, cam) {
			if s.StartMs > rotatedAt.UnixMilli() {
				return true
			}
		}
		return false
	})
}
