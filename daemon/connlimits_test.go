package daemon

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
)

// rawRequest writes a request's head on a fresh connection to the socket.
func rawRequest(t *testing.T, socket, head string) net.Conn {
	t.Helper()
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// A client that trickles its body is answered and cut off after
// api.body_timeout, whatever it sends; one that sends nothing at all too.
func TestSocketBodyTimeout(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.API.BodyTimeout = 300 * time.Millisecond })
	for _, tc := range []struct {
		name    string
		trickle bool
	}{{"trickle", true}, {"silent", false}} {
		t.Run(tc.name, func(t *testing.T) {
			conn := rawRequest(t, td.cfg.Socket, "POST /v1/js HTTP/1.1\r\nHost: toolcage\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
			start := time.Now()
			if tc.trickle {
				go func() {
					for i := 0; i < 50; i++ {
						time.Sleep(50 * time.Millisecond)
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}()
			}
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want 400", resp.StatusCode)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the body timeout took %v", took)
			}
		})
	}
	// A request whose body comes at once is unaffected.
	if err := td.client.Do(context.Background(), "GET", "/v1/health", nil, nil); err != nil {
		t.Fatal(err)
	}
}

// The body deadline is lifted once the body is in: a call that waits for a
// person far longer than api.body_timeout still completes.
func TestSocketBodyTimeoutSparesLongCalls(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.API.BodyTimeout = 200 * time.Millisecond })
	c := td.client
	create(t, c, "name: ask_slow\ndescription: asks\nkind: js\napproval: ask\njs: {code: 'return args.n + 1'}")
	done := make(chan error, 1)
	var resp api.CallResponse
	go func() {
		var err error
		resp, err = callTool(c, "ask_slow", map[string]any{"n": 41})
		done <- err
	}()
	ctx := context.Background()
	list := waitPending(t, c, 1)
	time.Sleep(800 * time.Millisecond) // four body timeouts
	if err := c.Do(ctx, "POST", "/v1/approvals/"+list.Approvals[0].ID+"/allow", api.ApprovalDecision{}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || string(resp.Result) != "42" {
			t.Fatalf("call: %+v %v", resp, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the allowed call did not return")
	}
}

// api.max_connections bounds open connections: one more waits until one
// closes.
func TestSocketMaxConnections(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.API.MaxConnections = 2 })
	held := []net.Conn{
		rawRequest(t, td.cfg.Socket, "GET /v1/health HTTP/1.1\r\n"),
		rawRequest(t, td.cfg.Socket, "GET /v1/health HTTP/1.1\r\n"),
	}
	// Give the server time to accept both before the third arrives.
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	err := td.client.Do(ctx, "GET", "/v1/health", nil, nil)
	cancel()
	if err == nil {
		t.Fatal("a third connection was served while two were held")
	}
	held[0].Close()
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := td.client.Do(ctx, "GET", "/v1/health", nil, nil); err != nil {
		t.Fatalf("after one closed: %v", err)
	}
}
