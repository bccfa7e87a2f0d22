package live

import "net/http"

// allowOrigin lets the page at r's Origin read the answer when allow
// accepts that origin: Access-Control-Allow-Origin names it (never "*",
// so a page of any other site, a DNS-rebinding one included, cannot read
// live video even holding a live URL). It returns whether it did.
func allowOrigin(h http.Header, r *http.Request, allow func(origin string) bool) bool {
	h.Add("Vary", "Origin")
	o := r.Header.Get("Origin")
	if o == "" || allow == nil || !allow(o) {
		return false
	}
	h.Set("Access-Control-Allow-Origin", o)
	return true
}
