package daemon

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
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

// acceptN dials ln n times and returns what it accepted.
func acceptN(t *testing.T, ln net.Listener, n int) (accepted, dialed []net.Conn) {
	t.Helper()
	for range n {
		d, err := net.Dial(ln.Addr().Network(), ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		accepted, dialed = append(accepted, c), append(dialed, d)
	}
	return accepted, dialed
}

// Claims at each edge: one worker's PerWorker-th passes and the next
// fails; all workers' stop at Max-PersonReserve; the person's claim
// passes with the workers' part full; a closed connection gives its
// claim back; a refused claim leaves the connection as it was.
func TestLimitListenerClaims(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitListener(raw, connLimits{Max: 6, PersonReserve: 2, PerWorker: 2})
	defer ln.Close()
	cs, _ := acceptN(t, ln, 6)
	claim := func(i int, worker string) error { return stateOf(cs[i]).claim(worker) }
	for i, w := range []string{"a", "a"} {
		if err := claim(i, w); err != nil {
			t.Fatalf("%s's connection %d: %v", w, i, err)
		}
	}
	if err := claim(2, "a"); errdefs.CodeOf(err) != errdefs.RateLimited {
		t.Fatalf("a's third: %v", err)
	}
	for i := 2; i < 4; i++ {
		if err := claim(i, "b"); err != nil {
			t.Fatalf("b's connection %d: %v", i, err)
		}
	}
	if err := claim(4, "c"); errdefs.CodeOf(err) != errdefs.RateLimited {
		t.Fatalf("past the workers' part: %v", err)
	}
	if err := claim(4, ""); err != nil {
		t.Fatalf("the person with the workers' part full: %v", err)
	}
	// A keep-alive connection of the person's that a worker's request
	// would claim past the cap stays the person's.
	if err := claim(4, "c"); err == nil {
		t.Fatal("the person's connection passed to a worker past the cap")
	}
	if l := ln.(*limitedListener); l.claimed != 5 || l.agents != 4 {
		t.Fatalf("claimed %d, agents %d", l.claimed, l.agents)
	}
	cs[0].Close()
	if err := claim(5, "c"); err != nil {
		t.Fatalf("after a's connection closed: %v", err)
	}
}

// With MaxUnclaimed, connections no request has claimed are at most that
// many: the next accepted closes the oldest, and a claimed one is never
// closed for it.
func TestLimitListenerUnclaimedEvicted(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitListener(raw, connLimits{Max: 8, PerWorker: 8, MaxUnclaimed: 2})
	defer ln.Close()
	cs, ds := acceptN(t, ln, 2)
	if err := stateOf(cs[0]).claim("a"); err != nil {
		t.Fatal(err)
	}
	_, more := acceptN(t, ln, 2) // the unclaimed cs[1] is the oldest
	open := func(d net.Conn) bool {
		d.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := d.Read(make([]byte, 1))
		return errors.Is(err, os.ErrDeadlineExceeded)
	}
	if !open(ds[0]) || open(ds[1]) || !open(more[0]) || !open(more[1]) {
		t.Fatalf("open: claimed %v, oldest unclaimed %v, newer %v %v", open(ds[0]), open(ds[1]), open(more[0]), open(more[1]))
	}
}
