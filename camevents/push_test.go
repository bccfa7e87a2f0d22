package camevents

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/onvif"
	"github.com/vigia/vigia/testenv"
)

// testPush is a PushConfig whose keys are HMACs of the camera id.
func testPush(base string) *PushConfig {
	key := func(cam string) string {
		m := hmac.New(sha256.New, []byte("secret"))
		m.Write([]byte(cam))
		return hex.EncodeToString(m.Sum(nil))[:32]
	}
	return &PushConfig{BaseURL: base, Key: key, Verify: func(cam, k string) bool { return hmac.Equal([]byte(k), []byte(key(cam))) }}
}

// TestPushMode: a camera whose URL asks for push mode is subscribed with
// the node's consumer address (Subscribe, no PullPoint); its Notify
// messages there become events; the consumer address refuses a wrong key,
// a camera without a push subscription here, a body that is not a Notify,
// and one larger than MaxNotifyBytes.
func TestPushMode(t *testing.T) {
	cam := onvifCamera(t, "hikvision")
	host := strings.TrimPrefix(cam.Base, "http://")
	var rec recorder
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	push := testPush(srv.URL)
	w := New(Config{Publish: rec.publish, Push: push})
	mux.Handle(NotifyPattern, w.NotifyHandler())
	if _, err := w.Resolve(camera.Config{ID: "p1", Trusted: true}, "onvif://admin:pw@"+host+"?events=push"); err != nil {
		t.Fatal(err)
	}
	c := w.Consumer()("p1")
	defer c.Close()
	// The camera may push its states before it counts its answer to
	// Subscribe.
	testenv.WaitFor(t, 20*time.Second, "the push subscription", func() bool {
		return cam.Subscriptions() == 1 && cam.Notified() > 0 && cam.Calls("Subscribe")+cam.Calls("CreatePullPointSubscription") > 0
	})
	if n := cam.Calls("Subscribe"); n != 1 || cam.Calls("CreatePullPointSubscription") != 0 {
		t.Fatalf("Subscribe %d, CreatePullPointSubscription %d; want a push subscription only", n, cam.Calls("CreatePullPointSubscription"))
	}
	if err := cam.Set("tamper", true); err != nil {
		t.Fatal(err)
	}
	n := cam.Notified()
	testenv.WaitFor(t, 10*time.Second, "the start notified", func() bool { return cam.Notified() > n })
	if err := cam.Set("tamper", false); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the tamper event", func() bool { return len(rec.events()) == 1 })
	if e := rec.events()[0]; e.Type != 1 || e.Kind != "tamper" || e.Camera != "p1" || e.End.Before(e.Start) {
		t.Fatalf("event %+v", e)
	}

	notify := `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:wsnt="http://docs.oasis-open.org/wsn/b-2"><s:Body><wsnt:Notify/></s:Body></s:Envelope>`
	for _, tt := range []struct {
		name, cam, key, body string
		want                 int
	}{
		{"a Notify", "p1", push.Key("p1"), notify, http.StatusOK},
		{"wrong key", "p1", push.Key("p2"), notify, http.StatusForbidden},
		{"no key", "p1", "x", notify, http.StatusForbidden},
		{"no push subscription here", "p2", push.Key("p2"), notify, http.StatusNotFound},
		{"not a Notify", "p1", push.Key("p1"), `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body><x/></s:Body></s:Envelope>`, http.StatusBadRequest},
		{"too large", "p1", push.Key("p1"), strings.Repeat(" ", MaxNotifyBytes+1), http.StatusRequestEntityTooLarge},
	} {
		res, err := http.Post(srv.URL+"/onvif/notify/"+tt.cam+"/"+tt.key, "application/soap+xml", bytes.NewReader([]byte(tt.body)))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, res.StatusCode, tt.want)
		}
	}
	c.Close()
	if n := cam.Subscriptions(); n != 0 {
		t.Fatalf("%d subscriptions after Close", n)
	}
	res, err := http.Post(srv.URL+"/onvif/notify/p1/"+push.Key("p1"), "application/soap+xml", strings.NewReader(notify))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("after Close: %d, want 404", res.StatusCode)
	}
}

// TestPushFallsBackToPull: a camera whose Notify messages never reach the
// node (the consumer address is unreachable from it) is pulled instead
// once FirstNotify passes, and its events still come.
func TestPushFallsBackToPull(t *testing.T) {
	cam := onvifCamera(t, "axis")
	host := strings.TrimPrefix(cam.Base, "http://")
	var rec recorder
	push := testPush("http://127.0.0.1:1") // nothing listens there
	push.FirstNotify = 300 * time.Millisecond
	w := New(Config{Publish: rec.publish, Push: push})
	if _, err := w.Resolve(camera.Config{ID: "f1", Trusted: true}, "onvif://admin:pw@"+host+"?events=push"); err != nil {
		t.Fatal(err)
	}
	c := w.Consumer()("f1")
	defer c.Close()
	testenv.WaitFor(t, 20*time.Second, "a PullPoint after the push subscription", func() bool {
		return cam.Calls("Subscribe") == 1 && cam.Calls("CreatePullPointSubscription") == 1 && cam.Calls("PullMessages") > 0
	})
	if n := cam.Subscriptions(); n != 1 {
		t.Fatalf("%d subscriptions, want the PullPoint alone", n)
	}
	if err := cam.Set("input", true); err != nil {
		t.Fatal(err)
	}
	pulls := cam.Calls("PullMessages")
	testenv.WaitFor(t, 10*time.Second, "the start pulled", func() bool { return cam.Calls("PullMessages") > pulls+1 })
	if err := cam.Set("input", false); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the digital input event", func() bool { return len(rec.events()) == 1 })
}

func TestPushRefused(t *testing.T) {
	for _, tt := range []struct {
		name       string
		err        error
		subscribed bool
		want       bool
	}{
		{"no notify", onvif.ErrNoNotify, true, true},
		{"subscribe refused", &onvif.Fault{Code: "Receiver", Subcode: "ActionNotSupported"}, false, true},
		{"credentials refused", &onvif.Fault{Code: "Sender", Subcode: "NotAuthorized"}, false, false},
		{"a fault after subscribing", &onvif.Fault{Code: "Sender", Subcode: "ResourceUnknown"}, true, false},
		{"network", errors.New("connection refused"), false, false},
	} {
		if got := pushRefused(tt.err, tt.subscribed); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
