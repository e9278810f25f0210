package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/daemon/api"
)

// BenchmarkMCPCall: the trivial JS tool called by an MCP client through
// `toolcage mcp` (a real process on a stdio pipe, relaying to the daemon's
// socket) and the same call over the socket API with the same worker
// token, interleaved on one daemon. Reports both medians and what MCP
// over stdio adds.
func BenchmarkMCPCall(b *testing.B) {
	d := startDaemon(b)
	createTool(b, d.client, trivialTool)
	wfile := filepath.Join(d.dir, "bench_worker.yaml")
	if err := os.WriteFile(wfile, []byte("name: bench\ntools: [add]\napproval: {default: preApproved}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	var added api.WorkerToken
	if err := d.client.Do(context.Background(), "POST", "/v1/workers", api.WorkerAddRequest{Path: wfile}, &added); err != nil {
		b.Fatal(err)
	}
	tokenFile := filepath.Join(d.dir, "bench.token")
	if err := os.WriteFile(tokenFile, []byte(added.Token+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	agent := api.NewClient(d.socket)
	agent.Token = added.Token

	bridge := exec.Command(filepath.Join(binDir(b), "toolcage"), "--socket", d.socket, "mcp", "--worker", "bench", "--token-file", tokenFile)
	bridge.Stderr = os.Stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(context.Background(), &sdk.CommandTransport{Command: bridge}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	params := &sdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}
	viaMCP := func() {
		r, err := cs.CallTool(context.Background(), params)
		if err != nil || r.IsError {
			b.Fatalf("MCP call: %v %+v", err, r)
		}
	}
	for range 50 {
		viaMCP()
		callAdd(b, agent)
	}
	var mLat, sLat []time.Duration
	i := 0
	for b.Loop() {
		m := func() { mLat = append(mLat, timed(viaMCP)) }
		s := func() { sLat = append(sLat, timed(func() { callAdd(b, agent) })) }
		if i%2 == 0 {
			m()
			s()
		} else {
			s()
			m()
		}
		i++
	}
	m, s := median(mLat), median(sLat)
	b.ReportMetric(us(m), "p50-µs")
	b.ReportMetric(us(s), "socket-p50-µs")
	b.ReportMetric(ms(m-s), "mcp-added-ms")
}
