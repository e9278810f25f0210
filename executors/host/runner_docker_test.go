package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/moby/moby/client"

	"github.com/toolcage/toolcage/errdefs"
)

// The egress socket: its dir and the socket are the container group's
// (0750, 0660) inside the 0700 state dir, and a key with Egress is refused
// until the runner has the socket, and gets it bound read-only, with no
// network, once it has.
func TestDockerRunnerEgressSocket(t *testing.T) {
	cli, err := client.New(client.WithHost("unix://" + filepath.Join(t.TempDir(), "no-engine.sock")))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	r := &DockerRunner{Client: cli, Image: "sha256:" + strings.Repeat("a", 64), StateDir: t.TempDir()}
	if err := os.Chmod(r.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	key := NewKey("http", "docker", nil)
	key.Egress = true
	if _, err := r.ClientConfig(context.Background(), key); errdefs.CodeOf(err) != errdefs.Unavailable || !strings.Contains(err.Error(), "egress") {
		t.Fatalf("an Egress key before ListenEgress: %v, want unavailable naming the egress socket", err)
	}
	ln, err := r.ListenEgress()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for path, mode := range map[string]os.FileMode{filepath.Join(r.StateDir, "egress"): 0o750, filepath.Join(r.StateDir, "egress", "egress.sock"): 0o660} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode || int(fi.Sys().(*syscall.Stat_t).Gid) != socketGroup() {
			t.Errorf("%s: mode %04o gid %d, want %04o gid %d", path, fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Gid, mode, socketGroup())
		}
	}
	if ContainerEgressSocket != "/run/toolcage-egress/egress.sock" {
		t.Fatalf("ContainerEgressSocket = %s", ContainerEgressSocket)
	}
	if !strings.HasSuffix(key.String(), "+egress") || NewKey("http", "docker", nil) == key {
		t.Fatalf("key %q: an Egress key must differ from a plain one", key)
	}
	for _, k := range []Key{key, NewKey("http", "docker", []string{"network"})} {
		p, err := r.newProc(k, nil, t.TempDir(), socketGroup())
		if err != nil {
			t.Fatal(err)
		}
		var egressMounts []string
		for _, m := range p.hc.Mounts {
			if m.Target == "/run/toolcage-egress" {
				egressMounts = append(egressMounts, fmt.Sprintf("%s ro=%v", m.Source, m.ReadOnly))
			}
		}
		if k.Egress {
			if want := filepath.Join(r.StateDir, "egress") + " ro=true"; len(egressMounts) != 1 || egressMounts[0] != want || p.hc.NetworkMode != "none" {
				t.Fatalf("Egress key: mounts %v network %q, want %s and none", egressMounts, p.hc.NetworkMode, want)
			}
		} else if len(egressMounts) != 0 {
			t.Fatalf("a key without Egress binds the egress socket: %v", egressMounts)
		}
	}
}
