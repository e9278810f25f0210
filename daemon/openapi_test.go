package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/toolcage/toolcage/daemon/apiserver"
)

func TestOpenAPIServed(t *testing.T) {
	td := startDaemon(t, "", nil)
	var got json.RawMessage
	if err := td.client.Do(context.Background(), "GET", "/v1/openapi.json", nil, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, apiserver.OpenAPI()) {
		t.Errorf("GET /v1/openapi.json served %d bytes, not the embedded document (%d bytes)", len(got), len(apiserver.OpenAPI()))
	}
}
