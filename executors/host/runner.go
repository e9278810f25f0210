// Package host is the daemon's side of the executors: a pool of warm
// executor processes, and the runners that start them (a plain process
// today; a sandboxed process and a container later).
package host

import (
	"context"
	"sort"
	"strings"

	"github.com/hashicorp/go-plugin"

	"github.com/toolcage/toolcage/executors"
)

// Key selects a set of interchangeable executors: same kind, same isolation,
// same permissions. Executors are never shared across keys, so a tool
// without network never lands in a process that has it.
type Key struct {
	Kind        executors.Kind
	Isolation   string
	Permissions string // canonical: sorted, comma-separated
	// Reset asks for the sandbox to be reset after every call (processes
	// the call left killed, scratch emptied): the daemon sets it for kinds
	// whose calls can leave something behind.
	Reset bool
	// Host asks for executors that can call back into the daemon during a
	// call (executors.Host): the daemon opens each one's Host stream. The
	// daemon sets it for kinds whose calls may call other tools.
	Host bool
}

// NewKey builds a Key with permissions in canonical order and no reset.
func NewKey(kind executors.Kind, isolation string, permissions []string) Key {
	p := append([]string(nil), permissions...)
	sort.Strings(p)
	return Key{Kind: kind, Isolation: isolation, Permissions: strings.Join(p, ",")}
}

func (k Key) String() string {
	s := string(k.Kind) + "/" + k.Isolation + "[" + k.Permissions + "]"
	if k.Host {
		s += "+host"
	}
	return s
}

// Runner knows how to start one executor process for a key. It returns a
// go-plugin client config holding only what it owns (Cmd or RunnerFunc,
// process attributes); the pool adds the handshake, plugin set and logger.
type Runner interface {
	// Name is the isolation mode this runner provides.
	Name() string
	// ClientConfig describes how to start one executor for key.
	ClientConfig(ctx context.Context, key Key) (*plugin.ClientConfig, error)
}
