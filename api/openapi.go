package api

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the OpenAPI 3 description of the interface.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI 3 document served at /api/openapi.json.
func OpenAPI() []byte { return openAPIDoc }

// openAPI is GET /api/openapi.json.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, err := w.Write(openAPIDoc)
	return err
}
