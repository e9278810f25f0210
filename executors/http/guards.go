package httpexec

import (
	"net/http"
	"strings"
	"sync"

	"github.com/toolcage/toolcage/policy"
)

// guardCacheSize is how many allowlists keep a guard and connection pool.
const guardCacheSize = 32

// guardEntry is a guard and the client that goes through it.
type guardEntry struct {
	key    string
	guard  *policy.NetGuard
	client *http.Client
}

// guardCache keeps the guards of recently used allowlists, so that calls of
// the same tool reuse connections. Reusing a connection is safe: it was
// dialled (and its address checked) for the same host and port under the
// same allowlist. It evicts the least recently used entry.
type guardCache struct {
	mu      sync.Mutex
	max     int
	entries []*guardEntry // most recently used last
}

func newGuardCache(max int) *guardCache { return &guardCache{max: max} }

// get returns the entry for an allowlist, building it on first use.
func (c *guardCache) get(allowed, private []string) (*guardEntry, error) {
	key := cacheKey(allowed, private)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key == key {
			copy(c.entries[i:], c.entries[i+1:])
			c.entries[len(c.entries)-1] = e
			return e, nil
		}
	}
	g, err := policy.NewNetGuard(policy.NetGuardConfig{AllowedDomains: allowed, AllowPrivateHosts: private})
	if err != nil {
		return nil, err
	}
	e := &guardEntry{key: key, guard: g, client: g.Client()}
	if len(c.entries) >= c.max {
		old := c.entries[0]
		c.entries = append(c.entries[:0], c.entries[1:]...)
		old.client.CloseIdleConnections()
	}
	c.entries = append(c.entries, e)
	return e, nil
}

func (c *guardCache) closeIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		e.client.CloseIdleConnections()
	}
}

// cacheKey identifies an allowlist exactly as given (order included; a
// reordered list merely gets its own entry).
func cacheKey(allowed, private []string) string {
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
