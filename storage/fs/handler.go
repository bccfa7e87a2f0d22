package fs

import (
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/vigia/vigia/storage"
)

// Handler serves the URLs of SignedURL: GET and HEAD of "/{key}?exp=..&sig=..",
// with Range support. A bad or expired signature gets 403, a missing object
// 404. Mount it where BaseURL points, stripping the mount path, e.g.
// mux.Handle("/media/", http.StripPrefix("/media", f.Handler())).
func (f *FS) Handler() http.Handler {
	return http.HandlerFunc(f.serve)
}

func (f *FS) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	key := strings.TrimPrefix(r.URL.Path, "/")
	q := r.URL.Query()
	if storage.ValidateKey(key) != nil || !f.verify(key, q.Get(paramExpiry), q.Get(paramSignature)) {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	file, err := os.Open(f.path(key))
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	sc, _ := f.readSidecar(key) // a broken sidecar still serves the bytes
	h := w.Header()
	h.Set("Content-Type", storage.ContentTypeFor(key, sc.ContentType))
	h.Set("X-Content-Type-Options", "nosniff")
	if exp, err := strconv.ParseInt(q.Get(paramExpiry), 10, 64); err == nil {
		if left := exp - f.now().Unix(); left > 0 {
			h.Set("Cache-Control", "private, max-age="+strconv.FormatInt(left, 10))
		}
	}
	http.ServeContent(w, r, "", fi.ModTime(), file)
}
