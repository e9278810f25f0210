package daemon

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
)

// BenchmarkAuthenticate: GET /v1/health over the socket as a person, and
// with a worker token (one hashed-token lookup in SQLite per request).
func BenchmarkAuthenticate(b *testing.B) {
	td := startDaemon(b, "", nil)
	path := filepath.Join(b.TempDir(), "bench.yaml")
	if err := writeFileErr(path, "name: bench\n"); err != nil {
		b.Fatal(err)
	}
	added, err := addWorker(td.client, path)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    *api.Client
	}{{"person", td.client}, {"token", withToken(td.client, added.Token)}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if err := tc.c.Do(context.Background(), "GET", "/v1/health", nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
