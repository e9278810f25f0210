// Package mcp serves each registered worker's tools as an MCP server (the
// official Go SDK) on top of daemon/dispatch. It has one job: translate.
// Listing a worker's tools is its agent's View (daemon/visible); a tools/call is
// dispatch.Call as the worker's agent (caller type llm, its token id);
// refusals and failures come back as tool results with isError, carrying
// the error code and message. Nothing about policy is decided here.
//
// Two transports reach the same per-worker servers:
//
//   - ServeConn: one session over a byte stream of newline-delimited
//     JSON-RPC. The socket API hands it the connection `toolcage mcp`
//     upgrades (GET /v1/mcp), so the stdio bridge only copies bytes.
//   - HTTPHandler: streamable HTTP at /mcp/{worker}, each request behind
//     Authorization: Bearer <that worker's token> (mcp.listen).
//
// One SDK server per worker is shared by all its sessions; a "tools
// changed" announcement (daemon/changes) makes every live server re-read
// its worker's tool set, and the SDK sends notifications/tools/list_changed
// to the sessions when the set it serves really changed.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/changes"
	"github.com/toolcage/toolcage/daemon/dispatch"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// Config is what a Server works with. Dispatcher, Workers and Authenticate
// are required.
type Config struct {
	Dispatcher *dispatch.Dispatcher
	// Workers finds a registered worker's last good definition.
	Workers dispatch.WorkerLookup
	// Authenticate checks a worker token and returns its agent: type llm,
	// id worker:NAME, the worker and the token id. A bad, unknown or
	// revoked token is an error coded unauthorized.
	Authenticate func(ctx context.Context, token string) (principal.Caller, error)
	// Changes announces that tools changed; nil means the tool lists are
	// read once per worker and never again.
	Changes *changes.Broadcaster
	// ProgressInterval is how often a call waiting for a person's approval
	// sends progress (2s when zero).
	ProgressInterval time.Duration
	// Version is the daemon's, told to clients at initialize.
	Version string
	Logger  *slog.Logger
}

// Server holds one SDK server per worker that has had a session.
type Server struct {
	cfg    Config
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	workers map[string]*workerServer
	conns   map[io.Closer]struct{}
	closed  bool
}

// workerServer is one worker's SDK server and what it serves.
type workerServer struct {
	name string
	srv  *sdk.Server

	mu sync.Mutex // one sync at a time
	// served maps each tool served to the JSON of its MCP form, so a sync
	// touches only what really changed (each touch notifies sessions).
	served map[string]string
}

// New returns a Server and starts following cfg.Changes.
func New(cfg Config) *Server {
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, log: cfg.Logger, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		workers: map[string]*workerServer{}, conns: map[io.Closer]struct{}{}}
	go s.follow()
	return s
}

// follow re-reads every live worker's tools after each announced change.
func (s *Server) follow() {
	defer close(s.done)
	if s.cfg.Changes == nil {
		return
	}
	ch, stop := s.cfg.Changes.Subscribe()
	defer stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-ch:
		}
		s.mu.Lock()
		live := make([]*workerServer, 0, len(s.workers))
		for _, ws := range s.workers {
			live = append(live, ws)
		}
		s.mu.Unlock()
		for _, ws := range live {
			if err := s.sync(s.ctx, ws); err != nil && s.ctx.Err() == nil {
				s.log.Warn("mcp: re-reading a worker's tools", "worker", ws.name, "err", err)
			}
		}
	}
}

// Close ends every session served over ServeConn and stops following
// changes. Streamable HTTP sessions end with their HTTP server.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]io.Closer, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	s.cancel()
	<-s.done
}

// serverFor returns the SDK server of the registered worker called name,
// made (and its tools read) on first use.
func (s *Server) serverFor(ctx context.Context, name string) (*workerServer, error) {
	if _, err := s.cfg.Workers(name); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, errdefs.Errorf(errdefs.Unauthorized, "worker %q is not registered", name)
		}
		return nil, err
	}
	s.mu.Lock()
	ws, ok := s.workers[name]
	if !ok {
		ws = &workerServer{name: name, served: map[string]string{}}
		ws.srv = sdk.NewServer(&sdk.Implementation{Name: "toolcage", Title: "toolcage worker " + name, Version: s.cfg.Version},
			&sdk.ServerOptions{
				Logger:       s.log,
				Instructions: fmt.Sprintf("The tools of toolcage worker %q. Calls run sandboxed under the worker's policy; some wait for a person's approval and report progress meanwhile.", name),
				Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
				// A worker's tool list is its agent's alone, and it changes
				// (list_changed says when): no shared cache may keep it.
				SetCacheable: func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) { c.CacheScope, c.TTLMs = "private", 0 },
			})
		s.workers[name] = ws
	}
	s.mu.Unlock()
	if !ok {
		if err := s.sync(ctx, ws); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

// sync makes ws serve exactly its worker's callable tools. A worker no
// longer registered serves none.
func (s *Server) sync(ctx context.Context, ws *workerServer) error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	want := map[string]*sdk.Tool{}
	w, err := s.cfg.Workers(ws.name)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return err
	default:
		agent := principal.Caller{Type: principal.TypeLLM, ID: "worker:" + ws.name, Worker: ws.name}
		v := s.cfg.Dispatcher.Views().Through(agent, w)
		// Listed: what the agent can call now. A pending, disabled or
		// rejected tool, or one its approval blocks, would only be
		// refused; it appears once a person makes it callable.
		tools, _, err := v.List(ctx, visible.Filter{Callable: true})
		if err != nil {
			return err
		}
		for _, t := range tools {
			want[t.Def.Name] = toolOf(t, v.Approval(t))
		}
	}
	var gone []string
	for name := range ws.served {
		if want[name] == nil {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		ws.srv.RemoveTools(gone...)
		for _, name := range gone {
			delete(ws.served, name)
		}
	}
	for name, t := range want {
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		if ws.served[name] == string(b) {
			continue
		}
		ws.srv.AddTool(t, s.handler(ws.name, name))
		ws.served[name] = string(b)
	}
	return nil
}

// track keeps c to be closed by Close; it reports false (and closes c)
// once the server is closing.
func (s *Server) track(c io.Closer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c io.Closer) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// toolOf is t's MCP form: its JSON Schema as input schema, annotations
// from its kind and permissions, and toolcage's own facts under _meta.
func toolOf(t *catalog.Tool, approval string) *sdk.Tool {
	schema := t.Def.Parameters
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	return &sdk.Tool{
		Name:        t.Def.Name,
		Description: t.Def.Description,
		InputSchema: schema,
		Annotations: Annotations(t.Def),
		Meta: sdk.Meta{
			"toolcage/kind":     string(t.Def.Kind),
			"toolcage/version":  t.Version,
			"toolcage/approval": approval,
		},
	}
}
