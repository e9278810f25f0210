// Package host is the daemon's side of the executors: a pool of warm
// executor processes, and the runners that start them (a plain process
// today; a sandboxed process and a container later).
package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	// Mounts are the host paths the executor sees (a worker's workspace, a
	// tool's own mounts), canonical; set with WithMounts, read with
	// MountList. An executor with a mount is never reused for a call
	// without it.
	Mounts string
	// Host asks for executors that can call back into the daemon during a
	// call (executors.Host): the daemon opens each one's Host stream. The
	// daemon sets it for kinds whose calls may call other tools.
	Host bool
	// Egress asks for executors that reach the daemon's egress proxy
	// through its Unix socket (ContainerEgressSocket) rather than over the
	// network: the daemon sets it for HTTP calls with secrets in a
	// container, whose key then holds no network.
	Egress bool
}

// Mount is one host path an executor sees. Every runner takes this list
// (MountList): the process sandbox binds each, a container runner mounts
// each the same way.
type Mount struct {
	// Source is the host path, absolute with its symlinks resolved (a
	// runner refuses a source that has become a symlink since).
	Source string `json:"source"`
	// Target is the path inside; "" means Source.
	Target string `json:"target,omitempty"`
	// Writable makes the mount read-write; mounts are read-only otherwise.
	Writable bool `json:"writable,omitempty"`
}

// WithMounts returns k holding ms, in canonical order.
func (k Key) WithMounts(ms []Mount) Key {
	if len(ms) == 0 {
		k.Mounts = ""
		return k
	}
	sorted := append([]Mount(nil), ms...)
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		return !a.Writable && b.Writable
	})
	b, _ := json.Marshal(sorted) // plain strings and bools: cannot fail
	k.Mounts = string(b)
	return k
}

// MountList is the list WithMounts put in k.
func (k Key) MountList() []Mount {
	if k.Mounts == "" {
		return nil
	}
	var ms []Mount
	if err := json.Unmarshal([]byte(k.Mounts), &ms); err != nil {
		return nil // only WithMounts writes it
	}
	return ms
}

// NewKey builds a Key with permissions in canonical order and no reset.
func NewKey(kind executors.Kind, isolation string, permissions []string) Key {
	p := append([]string(nil), permissions...)
	sort.Strings(p)
	return Key{Kind: kind, Isolation: isolation, Permissions: strings.Join(p, ",")}
}

// String names the key for logs and metric labels: mounts show as a
// short hash, so labels stay bounded and paths stay out of them.
func (k Key) String() string {
	s := string(k.Kind) + "/" + k.Isolation + "[" + k.Permissions + "]"
	if k.Mounts != "" {
		sum := sha256.Sum256([]byte(k.Mounts))
		s += "+mounts:" + hex.EncodeToString(sum[:4])
	}
	if k.Host {
		s += "+host"
	}
	if k.Egress {
		s += "+egress"
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

// MountChecker is a runner that can tell, before any call, whether it can
// give an executor a host mount as that executor's own: `worker check`,
// `add` and a reload ask it for every workspace and mount, so that what
// the kernel or file system cannot give is refused there with the path,
// its owner and mode and what to do, not at a call.
type MountChecker interface {
	CheckMount(m Mount) error
}
