package api

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestOpenAPIMatchesRoutes checks that the document describes exactly the
// registered routes, and that every operation says its responses.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	var documented, registered []string
	for p, ops := range doc.Paths {
		for m, raw := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
			var o struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(raw, &o); err != nil || o.OperationID == "" || len(o.Responses) == 0 {
				t.Errorf("%s %s: operationId and responses required (%v)", m, p, err)
			}
		}
	}
	tail := regexp.MustCompile(`\{\$\}$`)
	for _, r := range Routes() {
		registered = append(registered, r.Method+" "+tail.ReplaceAllString(r.Pattern, ""))
	}
	sort.Strings(documented)
	sort.Strings(registered)
	if strings.Join(documented, "\n") != strings.Join(registered, "\n") {
		t.Fatalf("documented:\n%s\n\nregistered:\n%s", strings.Join(documented, "\n"), strings.Join(registered, "\n"))
	}
}

func TestOpenAPIServed(t *testing.T) {
	e := newEnv(t, "sqlite", nil)
	r := e.do("GET", "/api/openapi.json", nil).want(t, 200)
	if _, ok := r.obj(t)["paths"]; !ok {
		t.Fatal("no paths")
	}
}
