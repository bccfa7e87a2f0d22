package api

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/export"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/testenv/headless"
)

// TestPlayerLinksVideoManifest: in Chromium, the camera player's Videos
// button lists the camera's ready downloadable video with links to it, its
// manifest, the manifest's signature and the public key; what the page
// fetches through those links verifies (the manifest's signature by the
// key, the video's hash). A video of another camera is not listed.
func TestPlayerLinksVideoManifest(t *testing.T) {
	e := newEnv(t, "sqlite", nil)
	clientID, _, tok := e.clientWithUser("player-manifest@example.com")
	cam, other := e.camera(clientID), e.camera(clientID)
	keys, err := sign.New(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	key := keys.ExportKey()
	start := e.clock.Now().Add(-30 * time.Minute).UnixMilli()
	video := func(camera int64, body string) int64 {
		t.Helper()
		c := strconv.FormatInt(camera, 10)
		r := e.do("POST", "/v2/api/drives?token="+tok+"&camera_id="+c+"&start_at="+strconv.FormatInt(start, 10)+
			"&end_at="+strconv.FormatInt(start+60000, 10)+"&description=door", nil).want(t, 200)
		id := int64(r.obj(t)["data"].(map[string]any)["id"].(float64))
		ids := strconv.FormatInt(id, 10)
		sum := sha256.Sum256([]byte(body))
		m := &export.Manifest{Version: export.ManifestVersion, Video: storage.VideoKey(ids), VideoSize: int64(len(body)),
			VideoSHA256: hex.EncodeToString(sum[:]), Camera: c, Segments: []export.ManifestSegment{}, Gaps: []export.ManifestGap{}}
		mb, sig := m.Sign(key, sign.KeyID(key.Public().(ed25519.PublicKey)))
		e.put(storage.VideoKey(ids), body)
		e.put(export.SignatureKey(id), string(sig))
		e.put(export.ManifestKey(id), string(mb))
		e.exp.mu.Lock()
		e.exp.state[ids] = JobState{Status: 1}
		e.exp.mu.Unlock()
		return id
	}
	id := video(cam, "the bytes of the downloadable video")
	video(other, "another camera's video")

	b := headless.Chromium(t)
	page := e.http.URL + "/api/camera/" + strconv.FormatInt(cam, 10) + "/player?token=" + tok
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Navigate(page), chromedp.Click("#videos", chromedp.ByQuery),
		chromedp.WaitVisible("#videos-list a.manifest", chromedp.ByQuery)); err != nil {
		t.Fatalf("videos list: %v (console: %q)", err, b.Logs())
	}
	// Fetch, from the page, what each link of the listed video names.
	var got struct {
		IDs                       []string
		Video, Manifest, Sig, Key string // base64
	}
	const read = `(async () => {
		const items = [...document.querySelectorAll('#videos-list li.video')];
		const b64 = async (sel) => {
			const a = items[0].querySelector(sel);
			if (!a) return '';
			const buf = new Uint8Array(await (await fetch(a.href)).arrayBuffer());
			let s = ''; buf.forEach(c => s += String.fromCharCode(c));
			return btoa(s);
		};
		return {IDs: items.map(li => li.dataset.id), Video: await b64('a.video'), Manifest: await b64('a.manifest'),
			Sig: await b64('a.signature'), Key: await b64('a.key')};
	})()`
	if err := chromedp.Run(ctx, chromedp.Evaluate(read, &got, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })); err != nil {
		t.Fatal(err)
	}
	if len(got.IDs) != 1 || got.IDs[0] != strconv.FormatInt(id, 10) {
		t.Fatalf("videos listed %v, want only %d", got.IDs, id)
	}
	dec := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) == 0 {
			t.Fatalf("a link fetched nothing: %q %v", s, err)
		}
		return b
	}
	pub, err := sign.ParsePublicKeyPEM(dec(got.Key))
	if err != nil {
		t.Fatalf("the public key link: %v", err)
	}
	m, err := export.VerifyVideo(bytes.NewReader(dec(got.Video)), dec(got.Manifest), dec(got.Sig), pub)
	if err != nil {
		t.Fatalf("what the player links does not verify: %v", err)
	}
	if m.Camera != strconv.FormatInt(cam, 10) {
		t.Fatalf("manifest of camera %s", m.Camera)
	}
}
