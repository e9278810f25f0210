// Package ui is the review page: a small web page on a loopback address
// where the person who runs the daemon decides approvals, approves or
// rejects pending tools, reads the audit log and sees the workers.
//
// Only the person gets in. `toolcage ui open` (a person-only socket API
// call) mints a one-time login link; the login trades it for a session
// cookie (HttpOnly, SameSite=Strict); every action is a POST carrying the
// session's CSRF token from a page of the same origin. No Authorization
// header works here: worker tokens are refused outright. The pages are
// rendered on the server with html/template; a few lines of inline
// JavaScript (allowed by a per-response CSP nonce, nothing else is) poll
// for fresh content. There are no external assets and no build step.
package ui

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

// Config sets up a review page server.
type Config struct {
	// Addr is the host:port the page is served on: the links point there,
	// and requests for any other Host or from any other Origin are refused.
	Addr string
	// LoginTTL is how long a login link works (once).
	LoginTTL time.Duration
	// SessionTTL is how long a login lasts.
	SessionTTL time.Duration
	// Poll is how often an open page asks for fresh content.
	Poll time.Duration
	Log  *slog.Logger
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Server serves the review page. Safe for concurrent use.
type Server struct {
	cfg   Config
	be    Backend
	log   *slog.Logger
	sess  *sessions
	pages map[string]*template.Template
	// hosts are the Host values accepted: Addr, and localhost:PORT for a
	// loopback Addr.
	hosts []string
}

// New makes a review page server over be.
func New(cfg Config, be Backend) (*Server, error) {
	if cfg.LoginTTL <= 0 || cfg.SessionTTL <= 0 {
		return nil, errors.New("ui: login and session lifetimes must be positive")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("ui: address %q: %w", cfg.Addr, err)
	}
	s := &Server{cfg: cfg, be: be, log: cfg.Log, sess: newSessions(cfg.LoginTTL, cfg.SessionTTL, cfg.Now),
		hosts: []string{cfg.Addr}}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		s.hosts = append(s.hosts, net.JoinHostPort("localhost", port))
	}
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	return s, nil
}

// LoginURL mints a one-time login link for person (a caller id such as
// uid:1000, recorded with every action of the session it starts).
func (s *Server) LoginURL(person string) (string, time.Time) {
	tok, exp := s.sess.mint(person)
	u := url.URL{Scheme: "http", Host: s.cfg.Addr, Path: "/login", RawQuery: url.Values{"token": {tok}}.Encode()}
	return u.String(), exp
}

// Handler is the review page.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", s.login)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/approvals", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /approvals", s.approvals)
	mux.HandleFunc("POST /approvals/{id}/allow", s.decideApproval(true))
	mux.HandleFunc("POST /approvals/{id}/deny", s.decideApproval(false))
	mux.HandleFunc("GET /tools", s.tools)
	mux.HandleFunc("POST /tools/{name}/approve", s.decideTool(true))
	mux.HandleFunc("POST /tools/{name}/reject", s.decideTool(false))
	mux.HandleFunc("GET /audit", s.audit)
	mux.HandleFunc("GET /workers", s.workers)
	mux.HandleFunc("POST /logout", s.logout)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.message(w, r, http.StatusNotFound, "Not found", "There is no page at "+r.URL.Path+".")
	})
	return s.guard(mux)
}

type ctxKey int

const (
	nonceKey ctxKey = iota
	sessionKey
)

// nonceOf is the CSP nonce of the response being written.
func nonceOf(ctx context.Context) string {
	n, _ := ctx.Value(nonceKey).(string)
	return n
}

// reqSession is the logged-in session of a request and its cookie.
type reqSession struct {
	session
	cookie string
}

func sessionOf(ctx context.Context) (reqSession, bool) {
	rs, ok := ctx.Value(sessionKey).(reqSession)
	return rs, ok
}

// fragmentHeader asks for a page's live part only (the page's poller).
const fragmentHeader = "X-Toolcage-Live"

// isFragment reports whether the request is the poller's.
func isFragment(r *http.Request) bool { return r.Header.Get(fragmentHeader) == "1" }

// hostOK reports whether host is one the page is served as.
func (s *Server) hostOK(host string) bool {
	for _, h := range s.hosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}
