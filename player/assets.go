package player

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"sync"
)

// bundleName is the hls.js bundle copied into assets/ by "make deps-npm".
const bundleName = "hls.min.js"

// assetsFS holds assets/: the hls.js bundle when the build had it, and a
// committed README that keeps the folder embeddable without it.
//
//go:embed assets
var assetsFS embed.FS

// bundle is the embedded hls.js and its content hash, read once.
type bundle struct {
	data    []byte
	version string
}

// loadBundle reads the embedded hls.js; data is nil when the build had none.
var loadBundle = sync.OnceValue(func() bundle {
	data, err := fs.ReadFile(assetsFS, "assets/"+bundleName)
	if err != nil || len(data) == 0 {
		return bundle{}
	}
	sum := sha256.Sum256(data)
	return bundle{data: data, version: hex.EncodeToString(sum[:8])}
})

// HasBundle reports whether this build embeds hls.js.
func HasBundle() bool { return loadBundle().data != nil }

// Assets serves the player's static files under the mount point given as
// Params.AssetsURL, with that prefix stripped: "/hls.min.js". The bundle is
// immutable per build (pages ask for it with ?v={hash}) and cached for a
// year. A build without the bundle answers 503 saying how to add it.
func Assets() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if strings.TrimPrefix(r.URL.Path, "/") != bundleName {
			http.NotFound(w, r)
			return
		}
		b := loadBundle()
		if b.data == nil {
			http.Error(w, "hls.js is not bundled in this build: run `make deps-npm` (npm ci of player/package.json) and rebuild", http.StatusServiceUnavailable)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("ETag", `"`+b.version+`"`)
		if r.Header.Get("If-None-Match") == `"`+b.version+`"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(b.data)
	})
}
