package main

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
)

// FuzzWritePendingChange renders the pending-change view of any pair of
// definitions: it must never panic, whatever the daemon sends.
func FuzzWritePendingChange(f *testing.F) {
	f.Add([]byte(`{"name":"a","kind":"js","js":{"code":"return 1"}}`), []byte(`{"name":"a","kind":"js","js":{"code":"return 2"}}`), 1)
	f.Add([]byte(`{}`), []byte(`null`), 0)
	f.Add([]byte(`"x"`), []byte(`[1,2`), 3)
	f.Fuzz(func(t *testing.T, cur, old []byte, approvedVersion int) {
		tool := &api.Tool{Definition: json.RawMessage(cur), Status: statusPendingApproval, Version: 2, ApprovedVersion: approvedVersion}
		_ = writePendingChange(io.Discard, "a", tool, json.RawMessage(old))
		_ = writePendingChange(io.Discard, "a", tool, nil)
	})
}
