package host

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/image"
	"github.com/toolcage/toolcage/executors/sandbox"
)

// Container labels. Every container a DockerRunner makes carries them, so
// a daemon finds its own (and a crashed daemon's) on a shared engine.
const (
	// LabelDaemon is the runner's random id.
	LabelDaemon = "io.toolcage.daemon"
	// LabelOwner is "host/pid/start": the daemon process that made the
	// container, for the orphan sweep.
	LabelOwner = "io.toolcage.owner"
	// LabelKind is the executor kind.
	LabelKind = "io.toolcage.kind"
	// LabelMounts lists the host paths a container binds (Key.Mounts):
	// the engine's own record shows the daemon's private mountpoints the
	// sources were handed over as (see pinMounts).
	LabelMounts = "io.toolcage.mounts"
)

// In-container paths.
const (
	containerSocketDir = "/run/toolcage"
	containerControl   = containerSocketDir + "/control.sock"
	containerEgressDir = "/run/toolcage-egress"
	egressSocketName   = "egress.sock"
	// ContainerEgressSocket is where a container whose key has Egress
	// finds the daemon's egress proxy.
	ContainerEgressSocket = containerEgressDir + "/" + egressSocketName
)

// ContainerLimits cap every container, like the process sandbox's cgroup.
type ContainerLimits struct {
	MemoryBytes int64
	Pids        int64
	CPUs        float64
	// TmpBytes sizes each tmpfs, /tmp and the work dir.
	TmpBytes int64
}

// DockerRunner starts every executor in its own container on a Docker
// Engine: the executor image (package image) with no network unless the
// key holds the network permission, a read-only root, tmpfs /tmp and work
// dir, memory, pids and CPU caps, every capability dropped,
// no-new-privileges and a non-root user (the image's; a container with
// host mounts runs as the ids the process sandbox uses, see mountUser).
// It provides isolation "docker".
//
// A key with Egress gets the egress proxy's socket dir (ListenEgress)
// bound read-only at /run/toolcage-egress: connect(2) needs no write
// access to the mount, and such a key holds no network, so the container
// has none.
//
// go-plugin's socket dir (0770, group shared with the container user) is
// bind-mounted at /run/toolcage, and closed to writes from the container
// (0750) once the executor listens, so a tool cannot swap the socket for
// one of its own. pid 1 of the container is the executor binary in
// sandbox's container mode: it reaps orphans and answers the reset after
// each call over a control socket in that dir.
//
// Hashicorp's plugincontainer runs go-plugin executors the same way, but
// it sets no read-only root, tmpfs, pids cap, user or no-new-privileges,
// stops containers with a 10 s grace, streams stdio through the log
// driver and brings a second Docker SDK (docker/docker); this runner is
// the small part of it we need, on the Moby client the daemon already has.
type DockerRunner struct {
	Client *client.Client
	// Image is the image to run, best its ID (a tag can be moved).
	Image string
	// StateDir holds go-plugin's per-executor socket dirs. It must be the
	// daemon's own (0700) and on the engine's file system.
	StateDir string
	// Env is added to the executor's environment.
	Env    []string
	Limits ContainerLimits
	// Runtime is the OCI runtime ("" = the engine's default; runsc for gVisor).
	Runtime string
	// Helper is a binary that calls sandbox.Init (the executor binary):
	// a root daemon idmaps a mount source someone else owns to the
	// container's user (sandbox.MountMapped), and the helper holds each
	// mapping's user namespace while it is made.
	Helper string

	maps     sandbox.IDMaps
	mapsOnce sync.Once

	// egressDir holds the egress proxy's socket (ListenEgress); "" until then.
	egressDir string
	// handPaths hands the engine the mount sources' paths, as a daemon
	// that cannot mount does (tests set it).
	handPaths bool

	idOnce sync.Once
	id     string

	mu   sync.Mutex
	live map[string]*containerProc
	// bindsClosed: Close ran; no more private binds (guarded by mu).
	bindsClosed bool
	// starts counts the containers started.
	starts atomic.Int64
}

// Name implements Runner.
func (r *DockerRunner) Name() string { return "docker" }

// Starts reports how many containers this runner has started.
func (r *DockerRunner) Starts() int64 { return r.starts.Load() }

// ID is this runner's label value (LabelDaemon).
func (r *DockerRunner) ID() string {
	r.idOnce.Do(func() {
		b := make([]byte, 8)
		rand.Read(b)
		r.id = hex.EncodeToString(b)
	})
	return r.id
}

// socketGroup is the group both sides share on the socket dir: the image
// user's when the daemon is root (it can chown), else the daemon's; a
// container whose user is not in it has it added to its groups.
func socketGroup() int {
	if os.Geteuid() == 0 {
		return image.GID
	}
	return os.Getegid()
}

// mountUser is the uid and gid a container with host mounts runs as: the
// ids the process sandbox reaches the host as (nobody when the daemon is
// root, the daemon's own otherwise). So a workspace is readable and
// writable alike in both isolations, and what a tool writes there has the
// same owner whichever ran it.
func mountUser() (int, int) {
	if os.Geteuid() == 0 {
		return sandbox.DefaultHostID, sandbox.DefaultHostID
	}
	return os.Geteuid(), os.Getegid()
}

// idmaps is r.maps with its helper set.
func (r *DockerRunner) idmaps() *sandbox.IDMaps {
	r.mapsOnce.Do(func() { r.maps.Helper = r.Helper })
	return &r.maps
}

// CheckMount implements MountChecker: a root daemon can hand the engine m
// as the container user's own (idmapped where someone else owns it), or
// the error says why not and what to do.
func (r *DockerRunner) CheckMount(m Mount) error {
	if r.handPaths {
		return nil
	}
	uid, gid := mountUser()
	return sandbox.CheckBind(sandbox.Bind{Source: m.Source, Target: m.Target, Writable: m.Writable, NoSymlinks: true}, uid, gid, r.idmaps())
}

// ClientConfig implements Runner.
func (r *DockerRunner) ClientConfig(_ context.Context, key Key) (*plugin.ClientConfig, error) {
	if r.Client == nil || r.Image == "" {
		return nil, errors.New("docker runner: no engine client or image")
	}
	if err := checkPrivateDir(r.StateDir); err != nil {
		return nil, err
	}
	for _, m := range key.MountList() {
		// Refused early, before any container is made; Start pins again.
		if _, err := sandbox.PinID(m.Source); err != nil {
			return nil, mountRefused(m, err)
		}
	}
	if key.Egress && r.egressDir == "" {
		return nil, errdefs.Errorf(errdefs.Unavailable, "docker runner: no egress proxy socket for %s", key)
	}
	group := socketGroup()
	return &plugin.ClientConfig{
		RunnerFunc: func(_ hclog.Logger, cmd *exec.Cmd, socketDir string) (runner.Runner, error) {
			return r.newProc(key, cmd.Env, socketDir, group)
		},
		// go-plugin makes the socket dir group-writable for the group, and
		// the executor its socket.
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: r.StateDir, Group: strconv.Itoa(group)},
		SkipHostEnv:      true,
		StartTimeout:     30 * time.Second,
	}, nil
}

func (r *DockerRunner) hasPerm(key Key, p string) bool {
	for _, x := range strings.Split(key.Permissions, ",") {
		if x == p {
			return true
		}
	}
	return false
}

func (r *DockerRunner) newProc(key Key, pluginEnv []string, socketDir string, group int) (*containerProc, error) {
	env := []string{"PATH=/usr/local/bin:/bin", "HOME=" + image.WorkDir}
	for _, kv := range pluginEnv {
		if strings.HasPrefix(kv, plugin.EnvUnixSocketDir+"=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, plugin.EnvUnixSocketDir+"="+containerSocketDir)
	env = append(env, sandbox.ContainerEnv(containerControl, image.WorkDir)...)
	env = append(env, r.Env...)

	// The key's mounts (a worker's workspace, a tool's own), bound below.
	// A container that has any runs as the ids the process sandbox uses.
	binds := key.MountList()
	uid, gid := image.UID, image.GID
	if len(binds) > 0 {
		uid, gid = mountUser()
	}
	tmp := r.Limits.TmpBytes
	if tmp <= 0 {
		tmp = 64 << 20
	}
	tmpfs := func(mode string, owner bool) string {
		o := "rw,nosuid,nodev,size=" + strconv.FormatInt(tmp, 10) + ",mode=" + mode
		if owner {
			o += ",uid=" + strconv.Itoa(uid) + ",gid=" + strconv.Itoa(gid)
		}
		return o
	}
	hc := &container.HostConfig{
		NetworkMode:    "none",
		ReadonlyRootfs: true,
		Tmpfs:          map[string]string{"/tmp": tmpfs("1777", false), image.WorkDir: tmpfs("0700", true)},
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		LogConfig:      container.LogConfig{Type: "none"},
		Runtime:        r.Runtime,
		Mounts: []mount.Mount{{
			Type: mount.TypeBind, Source: socketDir, Target: containerSocketDir,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationPrivate, NonRecursive: true},
		}},
	}
	if r.Limits.MemoryBytes > 0 {
		hc.Resources.Memory = r.Limits.MemoryBytes
		hc.Resources.MemorySwap = r.Limits.MemoryBytes // no swap on top
	}
	if r.Limits.Pids > 0 {
		p := r.Limits.Pids
		hc.Resources.PidsLimit = &p
	}
	if r.Limits.CPUs > 0 {
		hc.Resources.NanoCPUs = int64(r.Limits.CPUs * 1e9)
	}
	if group != gid {
		hc.GroupAdd = []string{strconv.Itoa(group)}
	}
	if key.Egress {
		hc.Mounts = append(hc.Mounts, mount.Mount{
			Type: mount.TypeBind, Source: r.egressDir, Target: containerEgressDir, ReadOnly: true,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationPrivate, NonRecursive: true},
		})
	}
	if r.hasPerm(key, "network") {
		// Egress through the engine's default bridge; the executor's
		// network guard still checks every address it dials.
		hc.NetworkMode = ""
	}
	// The mounts are bound as the process sandbox binds them: read-only
	// unless writable, never propagating. The daemon checked each source
	// when it built the key; Start pins each (opened with no symlink on
	// the way) and hands the engine a daemon-owned bind of what it opened
	// in place of the path (see pinMounts).
	bindAt := len(hc.Mounts)
	for _, m := range binds {
		target := m.Target
		if target == "" {
			target = m.Source
		}
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: target, ReadOnly: !m.Writable,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationPrivate}})
	}
	cc := &container.Config{
		Image:        r.Image,
		Entrypoint:   []string{image.ExecutorPath},
		Cmd:          []string{"--kind", string(key.Kind)},
		Env:          env,
		User:         strconv.Itoa(uid) + ":" + strconv.Itoa(gid),
		WorkingDir:   image.WorkDir,
		AttachStdout: true,
		AttachStderr: true,
		Labels:       map[string]string{LabelDaemon: r.ID(), LabelOwner: OwnerLabel(), LabelKind: string(key.Kind)},
	}
	if key.Mounts != "" {
		cc.Labels[LabelMounts] = key.Mounts
	}
	p := &containerProc{r: r, cc: cc, hc: hc, binds: binds, bindAt: bindAt, socketDir: socketDir, name: "container:" + string(key.Kind)}
	return p, nil
}

// ListenEgress makes the Unix socket through which containers reach the
// daemon's egress proxy and returns its listener, for the proxy to serve.
// Call it once, before the runner starts executors. The socket is
// StateDir/egress/egress.sock, the dir 0750 and the socket 0660 with the
// group the container user shares (as go-plugin's socket dirs). Who can
// connect: on the host, only the daemon's uid and root, as nobody else
// passes StateDir (0700); inside containers, only those of keys with
// Egress, which run no code of a tool's (an HTTP executor sends the
// request the daemon rendered). Either way a connection gets nothing
// without a live grant's token: 128 random bits that only the executor of
// the call holds, for as long as the call runs.
func (r *DockerRunner) ListenEgress() (net.Listener, error) {
	if err := checkPrivateDir(r.StateDir); err != nil {
		return nil, err
	}
	dir := filepath.Join(r.StateDir, "egress")
	if err := os.Mkdir(dir, 0o750); err != nil {
		return nil, fmt.Errorf("egress socket dir: %w", err)
	}
	sock := filepath.Join(dir, egressSocketName)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("egress socket: %w", err)
	}
	group := socketGroup()
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o750}, {sock, 0o660}} {
		err := os.Chown(f.path, -1, group)
		if err == nil {
			err = os.Chmod(f.path, f.mode)
		}
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("egress socket: %w", err)
		}
	}
	r.egressDir = dir
	return ln, nil
}

// AfterCall asks the container's pid 1 to kill what the call left running
// and wipe /tmp and the work dir, and reports a memory or pids limit the
// call broke (errdefs.LimitExceeded).
func (r *DockerRunner) AfterCall(ctx context.Context, c *plugin.Client) error {
	r.mu.Lock()
	p := r.live[c.ID()]
	r.mu.Unlock()
	if p == nil {
		return errdefs.Errorf(errdefs.ExecutorFailed, "executor %q is not a running container", c.ID())
	}
	rep, err := p.reset(ctx)
	if err != nil {
		return errdefs.Errorf(errdefs.ExecutorFailed, "resetting container %.12s: %v", p.id, err)
	}
	switch rep.Limit {
	case "memory":
		return errdefs.LimitError(errdefs.LimitMemory, "the call ran out of memory (container limit %d bytes)", r.Limits.MemoryBytes)
	case "pids":
		return errdefs.LimitError(errdefs.LimitPids, "the call hit the container's process limit (%d)", r.Limits.Pids)
	}
	if !rep.OK {
		return errdefs.Errorf(errdefs.ExecutorFailed, "resetting container %.12s: %s", p.id, rep.Err)
	}
	return nil
}

// Close removes every container of this runner still on the engine: the
// pool kills its executors first, this catches any the engine kept.
// It also takes down the private mountpoints of starts still under way
// and refuses new ones: a bind of a workspace left in StateDir would let
// a later os.RemoveAll of it delete the workspace's files.
func (r *DockerRunner) Close(ctx context.Context) error {
	r.unbindAll()
	return removeContainers(ctx, r.Client, LabelDaemon+"="+r.ID(), func(container.Summary) bool { return true })
}

// unbindAll marks the runner closed for private binds and unmounts every
// mountpoint under StateDir/binds (registered or left over), removing
// each only when empty (never recursively: one still bound would be the
// workspace itself).
func (r *DockerRunner) unbindAll() {
	r.mu.Lock()
	r.bindsClosed = true
	r.mu.Unlock()
	dir := filepath.Join(r.StateDir, "binds")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if err := unbindPrivate(filepath.Join(dir, e.Name())); err != nil {
			fmt.Fprintf(os.Stderr, "toolcage: removing mountpoint %s: %v\n", filepath.Join(dir, e.Name()), err)
		}
	}
}

func (r *DockerRunner) register(p *containerProc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = map[string]*containerProc{}
	}
	r.live[p.id] = p
}

func (r *DockerRunner) unregister(p *containerProc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.live, p.id)
}

// containerProc is go-plugin's view of one executor container.
type containerProc struct {
	r     *DockerRunner
	cc    *container.Config
	hc    *container.HostConfig
	binds []Mount
	// bindAt is where binds start in hc.Mounts.
	bindAt int
	// ids are the files Start pinned at binds' sources, which the
	// container was checked to hold; a warm container whose sources name
	// other files now is retired (CheckReuse).
	ids       []sandbox.FileID
	socketDir string
	name      string
	id        string

	attach         client.HijackedResponse
	stdout, stderr *io.PipeReader

	ctlMu sync.Mutex
	ctl   net.Conn
	ctlR  *bufio.Reader
}

func (p *containerProc) Start(ctx context.Context) error {
	cli := p.r.Client
	pins, err := p.pinMounts()
	if err != nil {
		return err
	}
	// The daemon's own binds go once the container has its copies.
	defer p.r.releasePins(pins)
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: p.cc, HostConfig: p.hc})
	if err != nil {
		return fmt.Errorf("docker create: %w", err)
	}
	p.id = res.ID
	// Attached before the start, so the handshake line cannot be missed.
	att, err := cli.ContainerAttach(ctx, p.id, client.ContainerAttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err != nil {
		p.remove()
		return fmt.Errorf("docker attach: %w", err)
	}
	p.attach = att.HijackedResponse
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	p.stdout, p.stderr = outR, errR
	go func() {
		_, err := stdcopy.StdCopy(outW, errW, p.attach.Reader)
		outW.CloseWithError(err)
		errW.CloseWithError(err)
	}()
	// A source the daemon could not bind itself is walked by the engine at
	// start: checked once more right before (the container's view is
	// checked after, whichever way it was handed over).
	for i, pin := range pins {
		if pin.private != "" {
			continue
		}
		if id, err := sandbox.PinID(p.binds[i].Source); err != nil || id != pin.id {
			p.cleanup()
			return mountChanged(p.binds[i], id, pin.id, err)
		}
	}
	if _, err := cli.ContainerStart(ctx, p.id, client.ContainerStartOptions{}); err != nil {
		p.cleanup()
		return fmt.Errorf("docker start: %w", err)
	}
	if err := p.verifyMounts(ctx); err != nil {
		p.cleanup()
		return err
	}
	p.r.starts.Add(1)
	p.r.register(p)
	return nil
}

// pinnedMount is one mount source as Start opened it.
type pinnedMount struct {
	f  *os.File // O_PATH, opened with no symlink on the way
	id sandbox.FileID
	// private is the daemon's own mountpoint (under StateDir, which the
	// agent cannot write) where f is bound: the path the engine gets. It
	// is "" when the daemon cannot mount (not root): the engine then gets
	// the source path, and verifyMounts is what catches a swap.
	private string
}

// pinMounts opens each bind source refusing a symlink on the way, binds
// what it opened on a private mountpoint, and points the container's
// mount there: what the engine resolves is then a path no one else can
// change, holding exactly the file that was checked. The engine must
// share the daemon's mount namespace (a local engine); verifyMounts
// refuses a container that got anything else.
func (p *containerProc) pinMounts() ([]pinnedMount, error) {
	if len(p.binds) == 0 {
		return nil, nil
	}
	pins := make([]pinnedMount, 0, len(p.binds))
	p.ids = make([]sandbox.FileID, len(p.binds))
	fail := func(err error) ([]pinnedMount, error) {
		p.r.releasePins(pins)
		return nil, err
	}
	for i, m := range p.binds {
		f, id, err := sandbox.Pin(m.Source)
		if err != nil {
			return fail(mountRefused(m, err))
		}
		pins = append(pins, pinnedMount{f: f, id: id})
		p.ids[i] = id
		mp, err := p.r.privateBind(f, !m.Writable)
		var be *sandbox.BindError
		if errors.As(err, &be) {
			return fail(mountRefused(m, err))
		}
		if err != nil {
			return fail(fmt.Errorf("container mount of %s: %w", m.Source, err))
		}
		pins[i].private = mp
		if mp != "" {
			p.hc.Mounts[p.bindAt+i].Source = mp
		}
	}
	return pins, nil
}

// releasePins unmounts and removes the private mountpoints and closes
// the pinned files.
func (r *DockerRunner) releasePins(pins []pinnedMount) {
	for _, pin := range pins {
		if pin.private != "" {
			if err := unbindPrivate(pin.private); err != nil {
				fmt.Fprintf(os.Stderr, "toolcage: removing mountpoint %s: %v\n", pin.private, err)
			}
		}
		pin.f.Close()
	}
}

// privateBind binds the pinned file f on a fresh mountpoint under
// StateDir/binds (read-only for a read-only mount) and returns its path,
// or "" when this daemon cannot mount (then the engine gets the source
// path). A daemon killed while one is bound leaves it there: unmount it
// before removing the dir by hand (`umount -R`), or the removal goes
// through it into the workspace.
func (r *DockerRunner) privateBind(f *os.File, readOnly bool) (string, error) {
	if r.handPaths {
		return "", nil
	}
	dir := filepath.Join(r.StateDir, "binds")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	b := make([]byte, 8)
	rand.Read(b)
	mp := filepath.Join(dir, hex.EncodeToString(b))
	if fi.IsDir() {
		err = os.Mkdir(mp, 0o700)
	} else {
		var nf *os.File
		if nf, err = os.OpenFile(mp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
			nf.Close()
		}
	}
	if err != nil {
		return "", err
	}
	// Under mu, so Close either sees this bind or refuses it.
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bindsClosed {
		os.Remove(mp)
		return "", errdefs.Errorf(errdefs.Unavailable, "docker runner is closed")
	}
	if err := bindFD(f, mp, readOnly, r.idmaps()); err != nil {
		os.Remove(mp)
		if errors.Is(err, errCannotMount) {
			return "", nil
		}
		return "", err
	}
	return mp, nil
}

// verifyMounts asks the container's pid 1, before the executor has run
// anything, what is mounted at each target, and refuses the container
// unless each is the file pinned at its source (device and inode) and a
// read-only mount is read-only.
func (p *containerProc) verifyMounts(ctx context.Context) error {
	if len(p.binds) == 0 {
		return nil
	}
	targets := make([]string, len(p.binds))
	for i, m := range p.binds {
		targets[i] = m.Target
		if targets[i] == "" {
			targets[i] = m.Source
		}
	}
	arg, _ := json.Marshal(targets)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rep, err := p.request(ctx, "stat "+string(arg), true)
	if err == nil && (!rep.OK || len(rep.Stats) != len(targets)) {
		err = fmt.Errorf("pid 1 answered %d of %d mounts (%s)", len(rep.Stats), len(targets), rep.Err)
	}
	if err != nil {
		return errdefs.Errorf(errdefs.ExecutorFailed, "checking the mounts of container %.12s: %v", p.id, err)
	}
	for i, st := range rep.Stats {
		m := p.binds[i]
		switch {
		case st.Err != "":
			return mountChanged(m, st.ID, p.ids[i], errors.New(st.Err))
		case st.ID != p.ids[i]:
			return mountChanged(m, st.ID, p.ids[i], nil)
		case !m.Writable && !st.ReadOnly:
			return errdefs.Errorf(errdefs.PolicyDenied, "container mount of %s at %s is writable, want read-only; the container was removed before any call", m.Source, targets[i])
		}
	}
	return nil
}

// mountRefused is a source that could not be pinned (a symlink on the
// way, gone).
func mountRefused(m Mount, err error) error {
	return errdefs.Errorf(errdefs.PolicyDenied, "container mount of %s: %v; nothing was mounted", m.Source, err)
}

// mountChanged is a source, or what a container got for it, that is not
// the file the runner pinned.
func mountChanged(m Mount, got, want sandbox.FileID, err error) error {
	if err != nil {
		return errdefs.Errorf(errdefs.PolicyDenied, "container mount of %s: %v; the container was removed before any call", m.Source, err)
	}
	return errdefs.Errorf(errdefs.PolicyDenied, "container mount of %s: the container got %s, not the %s checked at the source; it was removed before any call", m.Source, got, want)
}

// CheckReuse implements ReuseChecker: a warm container serves again only
// while each of its mount sources still names, walked with no symlink,
// the file it was given.
func (r *DockerRunner) CheckReuse(_ context.Context, c *plugin.Client) error {
	r.mu.Lock()
	p := r.live[c.ID()]
	r.mu.Unlock()
	if p == nil {
		return errdefs.Errorf(errdefs.ExecutorFailed, "executor %q is not a running container", c.ID())
	}
	return checkPins(p.binds, p.ids)
}

// Wait returns when the container stops, and removes it.
func (p *containerProc) Wait(ctx context.Context) error {
	w := p.r.Client.ContainerWait(ctx, p.id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	var err error
	select {
	case res := <-w.Result:
		if res.Error != nil {
			err = errors.New(res.Error.Message)
		} else if res.StatusCode != 0 {
			err = fmt.Errorf("container exited with status %d", res.StatusCode)
		}
	case werr := <-w.Error:
		if !cerrdefs.IsNotFound(werr) {
			err = werr
		}
	}
	p.cleanup()
	return err
}

// Kill removes the container at once (SIGKILL, no grace): an executor
// holds nothing worth a graceful stop.
func (p *containerProc) Kill(context.Context) error {
	p.cleanup()
	return nil
}

func (p *containerProc) cleanup() {
	p.r.unregister(p)
	p.ctlMu.Lock()
	if p.ctl != nil {
		p.ctl.Close()
		p.ctl = nil
	}
	p.ctlMu.Unlock()
	p.remove()
	if p.attach.Conn != nil {
		p.attach.Close()
	}
}

func (p *containerProc) remove() {
	if p.id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := p.r.Client.ContainerRemove(ctx, p.id, client.ContainerRemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
		// Conflict: a removal is already in progress.
		fmt.Fprintf(os.Stderr, "toolcage: removing container %.12s: %v\n", p.id, err)
	}
}

func (p *containerProc) ID() string            { return p.id }
func (p *containerProc) Name() string          { return p.name }
func (p *containerProc) Stdout() io.ReadCloser { return p.stdout }
func (p *containerProc) Stderr() io.ReadCloser { return p.stderr }

func (p *containerProc) Diagnose(ctx context.Context) string {
	res, err := p.r.Client.ContainerInspect(ctx, p.id, client.ContainerInspectOptions{})
	if err != nil {
		return "the executor container did not complete the go-plugin handshake; its stderr is in the daemon log"
	}
	st := res.Container.State
	if st == nil {
		return "the executor container did not complete the go-plugin handshake"
	}
	return fmt.Sprintf("the executor container %.12s did not complete the go-plugin handshake (status %s, exit code %d, OOM killed %v, error %q); its stderr is in the daemon log",
		p.id, st.Status, st.ExitCode, st.OOMKilled, st.Error)
}

// PluginToHost maps the socket the executor announced to its host path,
// then closes the socket dir to the container's writes.
func (p *containerProc) PluginToHost(network, addr string) (string, string, error) {
	if network != "unix" {
		return "", "", fmt.Errorf("container executor announced a %s address; only unix sockets are accepted", network)
	}
	if path.Dir(addr) != containerSocketDir {
		return "", "", fmt.Errorf("container executor announced %s, outside %s", addr, containerSocketDir)
	}
	hostAddr := filepath.Join(p.socketDir, path.Base(addr))
	// Both sockets exist by now (pid 1 listens before it starts the
	// executor); from here on the container may use them, not replace them.
	if err := os.Chmod(p.socketDir, 0o750); err != nil {
		return "", "", err
	}
	return network, hostAddr, nil
}

// HostToPlugin maps a host socket path into the container.
func (p *containerProc) HostToPlugin(network, addr string) (string, string, error) {
	if network == "unix" && filepath.Dir(addr) == p.socketDir {
		return network, path.Join(containerSocketDir, filepath.Base(addr)), nil
	}
	return network, addr, nil
}

// reset sends "reset" to the container's pid 1 and reads its reply.
func (p *containerProc) reset(ctx context.Context) (sandbox.ContainerReply, error) {
	return p.request(ctx, "reset", false)
}

// request sends one line to the container's pid 1 and reads its reply;
// with wait, it waits for pid 1 to listen (right after the start).
func (p *containerProc) request(ctx context.Context, line string, wait bool) (sandbox.ContainerReply, error) {
	var rep sandbox.ContainerReply
	p.ctlMu.Lock()
	defer p.ctlMu.Unlock()
	for p.ctl == nil {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", filepath.Join(p.socketDir, path.Base(containerControl)))
		if err == nil {
			p.ctl, p.ctlR = c, bufio.NewReader(c)
			break
		}
		if !wait || ctx.Err() != nil {
			return rep, err
		}
		select {
		case <-ctx.Done():
			return rep, err
		case <-time.After(time.Millisecond):
		}
	}
	dl, _ := ctx.Deadline() // zero: none
	p.ctl.SetDeadline(dl)
	if _, err := p.ctl.Write([]byte(line + "\n")); err != nil {
		return rep, err
	}
	b, err := p.ctlR.ReadBytes('\n')
	if err != nil {
		return rep, err
	}
	return rep, json.Unmarshal(b, &rep)
}

// checkPrivateDir: dir exists, is a directory (not a symlink) owned by the
// daemon's uid, and nobody else may enter it.
func checkPrivateDir(dir string) error {
	if dir == "" {
		return errors.New("docker runner: no state dir")
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("docker runner state dir: %w", err)
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ownedByMe(fi) {
		return fmt.Errorf("docker runner state dir %s: want a directory of uid %d with mode 0700", dir, os.Geteuid())
	}
	return nil
}

// Interface guards.
var (
	_ Runner        = (*DockerRunner)(nil)
	_ AfterCaller   = (*DockerRunner)(nil)
	_ ReuseChecker  = (*DockerRunner)(nil)
	_ runner.Runner = (*containerProc)(nil)
)
