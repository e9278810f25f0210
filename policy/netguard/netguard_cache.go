package netguard

import (
	"net/http"
	"slices"
	"strings"
	"sync"
)

// GuardedClient is a network guard and the client that dials through it.
type GuardedClient struct {
	Guard  *Guard
	Client *http.Client
}

// Cache keeps the guards of recently used allowlists, so calls of
// the same tool reuse connections. Reusing one is safe: it was dialled (and
// its address checked) for the same host and port under the same
// allowlist. The least recently used entry goes first.
type Cache struct {
	mu      sync.Mutex
	max     int
	keys    []string         // most recently used last
	entries []*GuardedClient // parallel to keys
}

// NewCache returns a cache of at most max allowlists.
func NewCache(max int) *Cache { return &Cache{max: max} }

// Get returns the guarded client for an allowlist, building it on first use.
func (c *Cache) Get(allowed, private []string) (*GuardedClient, error) {
	key := guardCacheKey(allowed, private)
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := slices.Index(c.keys, key); i >= 0 {
		e := c.entries[i]
		c.keys = append(slices.Delete(c.keys, i, i+1), key)
		c.entries = append(slices.Delete(c.entries, i, i+1), e)
		return e, nil
	}
	g, err := New(Config{AllowedDomains: allowed, AllowPrivateHosts: private})
	if err != nil {
		return nil, err
	}
	e := &GuardedClient{Guard: g, Client: g.Client()}
	if len(c.entries) >= c.max {
		c.entries[0].Client.CloseIdleConnections()
		c.keys, c.entries = slices.Delete(c.keys, 0, 1), slices.Delete(c.entries, 0, 1)
	}
	c.keys, c.entries = append(c.keys, key), append(c.entries, e)
	return e, nil
}

// CloseIdleConnections closes the idle connections of every cached client.
func (c *Cache) CloseIdleConnections() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		e.Client.CloseIdleConnections()
	}
}

// guardCacheKey identifies an allowlist exactly as given (order included;
// a reordered list merely gets its own entry).
func guardCacheKey(allowed, private []string) string {
	var b strings.Builder
	for _, s := range allowed {
		b.WriteString(s)
		b.WriteByte(0)
	}
	b.WriteByte(1)
	for _, s := range private {
		b.WriteString(s)
		b.WriteByte(0)
	}
	return b.String()
}

// RefusedRequestHeader reports whether a tool may not set the header
// (canonical form): Host would reach other virtual hosts behind an
// allowlisted address (domain fronting); the rest are hop-by-hop or framing
// headers that belong to the transport (Upgrade and HTTP2-Settings would
// ask for h2c or WebSocket switches).
func RefusedRequestHeader(canonical string) bool {
	switch canonical {
	case "Host", "Connection", "Proxy-Connection", "Keep-Alive", "Transfer-Encoding",
		"Te", "Trailer", "Upgrade", "Http2-Settings", "Content-Length":
		return true
	}
	return false
}
