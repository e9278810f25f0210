package apiserver

import (
	"bytes"
	_ "embed"
	"net/http"
)

// openAPIDoc is the OpenAPI 3.1 document of the socket API, written by hand
// beside the route table; openapi_test.go holds the two to each other.
//
//go:embed openapi.json
var openAPIDoc []byte

// openAPI serves GET /v1/openapi.json.
func (d *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(openAPIDoc)
	return err
}

// OpenAPI is the OpenAPI document GET /v1/openapi.json serves.
func OpenAPI() []byte { return bytes.Clone(openAPIDoc) }
