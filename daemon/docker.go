package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/config"
	"github.com/toolcage/toolcage/executors/engine"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/executors/image"
	"github.com/toolcage/toolcage/store"
)

// dockerRunner sets up isolation: docker. When the config's default or a
// stored tool uses docker, a missing engine or image stops the start with
// what to do; otherwise docker is set up if it can be and left out (with
// a log line) if not.
func (d *Daemon) dockerRunner(ctx context.Context) (*host.DockerRunner, error) {
	needed, err := d.usesDocker(ctx)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*host.DockerRunner, error) {
		if needed {
			return nil, fmt.Errorf("isolation docker: %w", err)
		}
		d.log.Info("docker isolation unavailable; tools with isolation: docker will fail", "reason", err)
		return nil, nil
	}
	cctx := ctx
	if !needed {
		// Nobody waits for docker: a silent engine must not hold the start.
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
	}
	cli, err := engine.Connect(cctx)
	if err != nil {
		return fail(err)
	}
	id, err := image.Check(cctx, cli, d.cfg.DockerImage(), d.cfg.Docker.ImageID)
	if err != nil {
		cli.Close()
		return fail(err)
	}
	if n, err := host.CleanOrphans(ctx, cli); err != nil {
		d.log.Warn("removing executor containers of dead daemons", "err", err)
	} else if n > 0 {
		d.log.Info("removed executor containers of dead daemons", "count", n)
	}
	if err := config.PrepareSocketDir(d.cfg.Socket); err != nil {
		cli.Close()
		return nil, err
	}
	// go-plugin's socket dirs live beside the API socket, in the daemon's
	// private runtime dir; the engine bind-mounts one into each container.
	state, err := os.MkdirTemp(filepath.Dir(d.cfg.Socket), "containers-")
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker state dir: %w", err)
	}
	sc := d.cfg.SandboxConfig()
	r := &host.DockerRunner{
		Client: cli, Image: id, StateDir: state, Runtime: d.cfg.Docker.Runtime, Helper: d.idmapHelper(),
		Limits: host.ContainerLimits{MemoryBytes: sc.MemoryBytes, Pids: int64(sc.Pids), CPUs: sc.CPUs, TmpBytes: sc.TmpBytes},
	}
	// HTTP calls with secrets reach the egress proxy from their containers
	// through this socket, in place of a network.
	ln, err := r.ListenEgress()
	if err != nil {
		cli.Close()
		os.RemoveAll(state)
		return nil, err
	}
	d.egress.Serve(ln)
	info, _ := engine.Describe(ctx, cli)
	d.log.Info("docker isolation ready", "engine", info.Host, "version", info.Version, "image", d.cfg.DockerImage(), "image_id", id, "daemon_label", r.ID())
	return r, nil
}

// usesDocker reports whether the default isolation or any stored tool is
// docker.
func (d *Daemon) usesDocker(ctx context.Context) (bool, error) {
	if d.cfg.Isolation == catalog.IsolationDocker {
		return true, nil
	}
	const page = 500
	for off := 0; ; off += page {
		tools, _, err := d.store.ListTools(ctx, store.ToolFilter{Limit: page, Offset: off})
		if err != nil {
			return false, err
		}
		for _, t := range tools {
			if t.Isolation == catalog.IsolationDocker {
				return true, nil
			}
		}
		if len(tools) < page {
			return false, nil
		}
	}
}

// closeDocker removes what the docker runner left: containers the engine
// still has under this daemon's label, and the socket dirs.
func (d *Daemon) closeDocker() {
	r := d.docker
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		d.log.Warn("removing executor containers", "err", err)
	}
	r.Client.Close()
	os.RemoveAll(r.StateDir)
}

// idmapHelper is the executor binary, which makes the user namespaces of
// the docker runner's idmapped mounts (sandbox.IDMaps); "" if it is not
// found (then a mount someone else owns is refused with what to do).
func (d *Daemon) idmapHelper() string {
	exe, err := host.FindExecutor(d.cfg.Executor.Path)
	if err != nil {
		return ""
	}
	return exe
}
