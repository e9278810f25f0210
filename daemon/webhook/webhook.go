// Package webhook announces events (new approvals) to a URL a person
// configured, as JSON POSTs. It never holds up the call path: Announce
// queues and returns, one goroutine delivers in order, each POST bounded
// by a timeout, and a full queue drops the announcement (logged). The URL
// passes the network guard's rules: https anywhere public, plain http only
// to a loopback host, and an address that is private or loopback only
// when the config allows it.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/toolcage/toolcage/policy/netguard"
)

// Config sets one webhook.
type Config struct {
	// URL receives each announcement as a POST of JSON.
	URL string
	// Timeout bounds one POST: connecting, sending and the answer.
	Timeout time.Duration
	// AllowPrivate lets the URL's host resolve to a private or loopback
	// address (a notifier on this machine or the local network).
	AllowPrivate bool
	// UserAgent is sent as User-Agent.
	UserAgent string
}

// queueSize is how many announcements may wait for delivery.
const queueSize = 64

// maxAnswer is how much of an answer is read (and dropped) so the
// connection can be reused.
const maxAnswer = 64 << 10

// CheckURL says whether raw may be a webhook: an absolute http(s) URL
// without credentials, https unless the host is loopback (localhost or a
// loopback IP), and then only with allowPrivate, since loopback is private.
func CheckURL(raw string, allowPrivate bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("scheme %q: want https (or http to a loopback host)", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("no host")
	}
	if u.User != nil {
		return nil, errors.New("credentials in the URL are refused: they would travel with every announcement and show in logs")
	}
	if u.Fragment != "" || u.Opaque != "" {
		return nil, errors.New("a fragment or an opaque URL has no meaning for a webhook")
	}
	loopback := isLoopbackHost(u.Hostname())
	if u.Scheme == "http" && !loopback {
		return nil, fmt.Errorf("plain http to %s: announcements carry what a call would run; use https, or http only to a loopback host", u.Hostname())
	}
	if loopback && !allowPrivate {
		return nil, fmt.Errorf("%s is a loopback host: set approvals.webhook_allow_private: true to announce to this machine", u.Hostname())
	}
	return u, nil
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Notifier delivers announcements to one webhook.
type Notifier struct {
	cfg    Config
	url    string
	client *http.Client
	log    *slog.Logger
	queue  chan []byte
	done   chan struct{}
	once   sync.Once
	// delivered and failed count POSTs, for tests and the log.
	mu                sync.Mutex
	delivered, failed int
}

// New checks cfg and starts the delivery goroutine; Close stops it.
func New(cfg Config, log *slog.Logger) (*Notifier, error) {
	u, err := CheckURL(cfg.URL, cfg.AllowPrivate)
	if err != nil {
		return nil, fmt.Errorf("webhook %s: %w", netguard.RedactURL(cfg.URL), err)
	}
	if cfg.Timeout <= 0 {
		return nil, errors.New("webhook: the timeout must be positive")
	}
	gc := netguard.Config{AllowedDomains: []string{u.Hostname()}}
	if cfg.AllowPrivate {
		gc.AllowPrivateHosts = []string{u.Hostname()}
	}
	g, err := netguard.New(gc)
	if err != nil {
		return nil, fmt.Errorf("webhook %s: %w", netguard.RedactURL(cfg.URL), err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{cfg: cfg, url: u.String(), log: log, queue: make(chan []byte, queueSize), done: make(chan struct{}),
		client: &http.Client{
			Transport: g.Transport(),
			Timeout:   cfg.Timeout,
			// A webhook answers; it does not send the announcement on.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
	go n.run()
	return n, nil
}

// Announce queues v (encoded as JSON) for delivery and returns at once. A
// full queue drops it, with a warning in the log.
func (n *Notifier) Announce(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		n.log.Error("webhook: encoding an announcement", "err", err)
		return
	}
	select {
	case <-n.done:
		return
	default:
	}
	select {
	case n.queue <- b:
	default:
		n.count(false)
		n.log.Warn("webhook: queue full, announcement dropped", "url", netguard.RedactURL(n.url), "queued", queueSize)
	}
}

func (n *Notifier) run() {
	for {
		select {
		case <-n.done:
			return
		case b := <-n.queue:
			err := n.post(b)
			n.count(err == nil)
			if err != nil {
				n.log.Warn("webhook: announcement not delivered", "url", netguard.RedactURL(n.url), "err", err)
			}
		}
	}
}

// post sends one announcement; any 2xx answer is delivery.
func (n *Notifier) post(body []byte) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-n.done: // Close does not wait a whole timeout
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if n.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", n.cfg.UserAgent)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}

func (n *Notifier) count(ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ok {
		n.delivered++
	} else {
		n.failed++
	}
}

// Counts returns how many announcements were delivered and how many were
// not (refused, failed, timed out or dropped).
func (n *Notifier) Counts() (delivered, failed int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.delivered, n.failed
}

// Close stops delivery: what is still queued is dropped, a POST under way
// is cancelled.
func (n *Notifier) Close() {
	n.once.Do(func() {
		close(n.done)
		n.client.CloseIdleConnections()
	})
}
