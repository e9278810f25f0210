// Package apiserver is the socket API's HTTP side: the peer check, the
// authentication of every request into a principal.Caller (auth.go), the
// person-only acts and their admin log (persononly.go), the route table
// (routes.go) and one file per route noun, with the wire shapes they
// answer in (wire.go: errors, bodies, statuses). It holds no state of its
// own beyond what Config hands it: the daemon builds a Server and serves
// its Handler on the socket. A new route goes in the route table and the
// file of its noun; it calls daemon/dispatch for anything that runs a
// tool, and asks the caller's View (daemon/visible) what it sees.
package apiserver

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/changes"
	"github.com/toolcage/toolcage/daemon/config"
	"github.com/toolcage/toolcage/daemon/dispatch"
	"github.com/toolcage/toolcage/daemon/events"
	"github.com/toolcage/toolcage/daemon/mcp"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/policy/mounts"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
	"github.com/toolcage/toolcage/store/workerdb"
)

// SecretsKey is the key stored secrets are sealed under, as the handlers
// use it; the daemon holds it (it is never logged).
type SecretsKey interface {
	// Use runs fn with the current key; fn must not keep it.
	Use(fn func(key []byte) error) error
	// Rotate re-seals every stored secret under a new key and keeps it.
	Rotate(ctx context.Context) error
}

// Config is what the handlers work with. Every field is required but
// MCP (nil: GET /v1/mcp is refused), LoginURL (nil: the review page is
// off), WorkerDBs, Log and the event hubs.
type Config struct {
	Config     config.Config
	Version    string
	Started    time.Time
	Log        *slog.Logger
	Store      *store.Store
	Catalog    *catalog.Catalog
	Dispatcher *dispatch.Dispatcher
	Workers    *worker.Registry
	Changes    *changes.Broadcaster
	WorkerDBs  *workerdb.Set
	MCP        *mcp.Server
	SecretsKey SecretsKey
	// Metrics serves GET /v1/metrics for a person.
	Metrics http.Handler
	// Mounts gives the daemon's own paths, which no worker may mount.
	Mounts func() mounts.Guard
	// LoginURL mints a one-time review page login link for a person.
	LoginURL func(personID string) (string, time.Time)
	// Approvals and Calls are the event streams' hubs; Stopping closes
	// when the daemon shuts down, and the streams end then.
	Approvals *events.Hub[store.Approval]
	Calls     *events.Hub[store.Execution]
	Stopping  <-chan struct{}
	// AllowUID decides which socket peers may use the API.
	AllowUID func(uid uint32) bool
	// ClaimConn counts an authenticated request's connection against its
	// caller's share of the connections (the daemon's connection limits);
	// an error refuses the request. Nil claims nothing.
	ClaimConn func(w http.ResponseWriter, r *http.Request, c principal.Caller) error
	// HostPaths refuses a worker whose workspace or mounts the sandbox
	// cannot give its tools as their own (the runners' mount check). Nil
	// checks nothing.
	HostPaths func(*worker.Worker) error
}

// Server serves the socket API. Its fields carry the names the handlers
// have always used.
type Server struct {
	cfg        config.Config
	version    string
	started    time.Time
	log        *slog.Logger
	store      *store.Store
	catalog    *catalog.Catalog
	disp       *dispatch.Dispatcher
	workers    *worker.Registry
	changes    *changes.Broadcaster
	workerDBs  *workerdb.Set
	mcp        *mcp.Server
	secretsKey SecretsKey
	metrics    http.Handler
	mountGuard func() mounts.Guard
	loginURL   func(personID string) (string, time.Time)
	events     hubs
	stopping   <-chan struct{}
	allowUID   func(uid uint32) bool
	claimConn  func(w http.ResponseWriter, r *http.Request, c principal.Caller) error
	hostPaths  func(*worker.Worker) error
}

// hubs are the event streams' sources.
type hubs struct {
	approvals *events.Hub[store.Approval]
	calls     *events.Hub[store.Execution]
}

// New makes the Server of cfg.
func New(cfg Config) *Server {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg.Config, version: cfg.Version, started: cfg.Started, log: log, store: cfg.Store,
		catalog: cfg.Catalog, disp: cfg.Dispatcher, workers: cfg.Workers, changes: cfg.Changes, workerDBs: cfg.WorkerDBs,
		mcp: cfg.MCP, secretsKey: cfg.SecretsKey, metrics: cfg.Metrics, mountGuard: cfg.Mounts, loginURL: cfg.LoginURL,
		events: hubs{approvals: cfg.Approvals, calls: cfg.Calls}, stopping: cfg.Stopping, allowUID: cfg.AllowUID, claimConn: cfg.ClaimConn, hostPaths: cfg.HostPaths}
}

// Handler serves every route, behind the peer check and authentication.
func (d *Server) Handler() http.Handler { return d.routes() }

// CheckWorker refuses a parsed worker the daemon cannot honour (the
// worker registry's Check).
func (d *Server) CheckWorker(w *worker.Worker) error { return d.checkWorker(w) }
