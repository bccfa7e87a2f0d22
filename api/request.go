package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
)

// maxFormDepth bounds the nesting of bracketed form keys (users[0][name]).
const maxFormDepth = 4

// maxFormIndex bounds list indexes in bracketed form keys.
const maxFormIndex = 1000

// readInput merges the query string and the request body into one map of
// fields; body fields win. JSON bodies must be an object; form bodies
// (urlencoded or multipart) may use bracketed keys (users[0][name]) for
// nested fields. A malformed body is 400, a body over the limit 413.
func (s *Server) readInput(w http.ResponseWriter, r *http.Request) (map[string]any, error) {
	in := map[string]any{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			setFormKey(in, k, v[len(v)-1])
		}
	}
	if r.Body == nil || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return in, nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.BodyLimit)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json", "":
		data, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, bodyError(err)
		}
		if len(strings.TrimSpace(string(data))) == 0 {
			return in, nil
		}
		if ct == "" && !json.Valid(data) {
			return nil, fail(http.StatusBadRequest, "request body is not JSON; send application/json or a form")
		}
		if err := readJSONObject(data, in); err != nil {
			return nil, err
		}
	case "application/x-www-form-urlencoded", "multipart/form-data":
		var form url.Values
		if ct == "multipart/form-data" {
			if err := r.ParseMultipartForm(s.cfg.BodyLimit); err != nil {
				return nil, bodyError(err)
			}
			form = r.MultipartForm.Value
		} else {
			data, err := io.ReadAll(r.Body)
			if err != nil {
				return nil, bodyError(err)
			}
			if looksLikeJSONObject(data) {
				// curl -d sends JSON as a form unless told otherwise;
				// read as a form it would be one nameless field.
				if err := readJSONObject(data, in); err != nil {
					return nil, fail(http.StatusBadRequest, "the body looks like JSON sent as "+ct+
						" (send Content-Type: application/json): "+err.Error())
				}
				return in, nil
			}
			if form, err = url.ParseQuery(string(data)); err != nil {
				return nil, fail(http.StatusBadRequest, "malformed form body")
			}
		}
		keys := make([]string, 0, len(form))
		for k := range form {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v := form[k]; len(v) > 0 {
				if err := setFormKey(in, k, v[len(v)-1]); err != nil {
					return nil, fail(http.StatusBadRequest, err.Error())
				}
			}
		}
		if err := listify(in, 0); err != nil {
			return nil, fail(http.StatusBadRequest, err.Error())
		}
	default:
		return nil, fail(http.StatusUnsupportedMediaType, "unsupported content type "+ct+"; send application/json or a form")
	}
	return in, nil
}

// readJSONObject decodes data, which must be one JSON object, into in
// (numbers as json.Number). Anything else is 400.
func readJSONObject(data []byte, in map[string]any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var body any
	if err := dec.Decode(&body); err != nil {
		return fail(http.StatusBadRequest, "malformed JSON body: "+err.Error())
	}
	if dec.More() {
		return fail(http.StatusBadRequest, "malformed JSON body: more than one value")
	}
	obj, ok := body.(map[string]any)
	if !ok {
		return fail(http.StatusBadRequest, "JSON body must be an object")
	}
	for k, v := range obj {
		in[k] = v
	}
	return nil
}

// looksLikeJSONObject reports whether a body declared a form is a JSON
// object: it starts with "{" and ends with "}" (surrounding white space
// aside). No form a client means starts so: "{" would be a field name.
func looksLikeJSONObject(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}'
}

// bodyError answers a body that could not be read: 413 over the limit, 408
// when it did not arrive in time (the node's http.read_timeout), else 400.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", mbe.Limit))
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fail(http.StatusRequestTimeout, "request body not received in time")
	}
	return fail(http.StatusBadRequest, "unreadable request body")
}

// setFormKey sets a possibly bracketed key (a[b][0]) in m.
func setFormKey(m map[string]any, key, val string) error {
	name, rest, nested := strings.Cut(key, "[")
	if !nested {
		m[key] = val
		return nil
	}
	path := []string{name}
	rest = "[" + rest
	for rest != "" {
		if rest[0] != '[' {
			return fmt.Errorf("malformed form key %q", key)
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return fmt.Errorf("malformed form key %q", key)
		}
		path = append(path, rest[1:end])
		rest = rest[end+1:]
	}
	if len(path) > maxFormDepth+1 {
		return fmt.Errorf("form key %q nests too deep", key)
	}
	cur := m
	for i, p := range path {
		if p == "" { // a[] appends: use the next free index
			p = strconv.Itoa(len(cur))
		}
		if i == len(path)-1 {
			cur[p] = val
			return nil
		}
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	return nil
}

// listify turns nested maps whose keys are 0..n-1 into lists.
func listify(m map[string]any, depth int) error {
	for k, v := range m {
		sub, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if err := listify(sub, depth+1); err != nil {
			return err
		}
		if l, ok := asList(sub); ok {
			m[k] = l
		}
	}
	return nil
}

func asList(m map[string]any) ([]any, bool) {
	if len(m) == 0 || len(m) > maxFormIndex {
		return nil, false
	}
	out := make([]any, len(m))
	for k, v := range m {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(m) || strconv.Itoa(i) != k {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}
