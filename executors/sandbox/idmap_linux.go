package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A root daemon opens every bind source itself, with its own rights,
// before the sandbox starts: open_tree(OPEN_TREE_CLONE) makes a detached
// copy of the mount tree at the source, mount_setattr sets its flags and,
// when the source belongs to someone other than the sandbox's host uid,
// an idmapping (MOUNT_ATTR_IDMAP, Linux 5.12+) that shows the owner's
// files as the sandbox's root's and writes the sandbox's files as the
// owner's, as podman and systemd-nspawn do. The launcher only moves the
// detached tree into its root (move_mount), so the sandbox's uid needs no
// access to the source's parents (a 0700 home), and what the path names
// after this open does not matter.

// IDMaps holds the user namespaces that carry idmappings, one per
// (owner uid, owner gid, host uid, host gid): a user namespace lives as
// long as a descriptor of it, so each is made once (one short-lived
// helper process) and reused by every sandbox. The zero value is ready;
// Close releases them.
type IDMaps struct {
	// Helper is a binary that calls Init (the executor binary or the
	// launcher): it holds each new user namespace while it is opened.
	Helper string

	mu  sync.Mutex
	fds map[idmapKey]int
}

type idmapKey struct{ uid, gid, hostUID, hostGID int }

// Close releases the user namespaces.
func (m *IDMaps) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, fd := range m.fds {
		unix.Close(fd)
		delete(m.fds, k)
	}
	return nil
}

// userns returns a user namespace descriptor mapping uid to hostUID and
// gid to hostGID (each one id).
func (m *IDMaps) userns(k idmapKey) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fd, ok := m.fds[k]; ok {
		return fd, nil
	}
	if m.Helper == "" {
		return -1, errors.New("no helper binary to make its user namespace")
	}
	fd, err := makeUserNS(m.Helper, k)
	if err != nil {
		return -1, err
	}
	if m.fds == nil {
		m.fds = map[idmapKey]int{}
	}
	m.fds[k] = fd
	return fd, nil
}

// stageHold is a helper that holds its user namespace until its stdin
// closes; makeUserNS opens the namespace meanwhile.
const stageHold = "hold"

func holdMain() int {
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// makeUserNS starts helper in a new user namespace whose uid_map and
// gid_map send k.uid and k.gid (as the ids "inside") to the host ids,
// opens the namespace and ends the helper. A mount idmapped with it shows
// a file the disk says k.uid owns as owned by host uid k.hostUID.
func makeUserNS(helper string, k idmapKey) (int, error) {
	bin, err := os.Open(helper)
	if err != nil {
		return -1, fmt.Errorf("idmap helper: %w", err)
	}
	defer bin.Close()
	cmd := &exec.Cmd{
		Path:       "/proc/self/fd/3",
		Args:       []string{"toolcage-idmap"},
		Env:        []string{envStage + "=" + stageHold},
		ExtraFiles: []*os.File{bin},
		Dir:        "/",
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:  unix.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: k.uid, HostID: k.hostUID, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: k.gid, HostID: k.hostGID, Size: 1}},
			Pdeathsig:   syscall.SIGKILL,
		},
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return -1, err
	}
	if err := cmd.Start(); err != nil {
		stdin.Close()
		return -1, fmt.Errorf("idmap helper: %w", err)
	}
	// The maps are written before Start returns (the child waits for them
	// before it execs), and the helper lives until stdin closes.
	fd, err := unix.Open("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	stdin.Close()
	werr := cmd.Wait()
	if err != nil {
		return -1, fmt.Errorf("idmap helper: user namespace: %w", err)
	}
	if werr != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("idmap helper: %w", werr)
	}
	return fd, nil
}

// detachedBind is a bind the daemon prepared: the detached mount tree and
// what the launcher needs to know to mount it.
type detachedBind struct {
	tree *os.File
	dir  bool
}

// prepareBind opens b.Source with the daemon's rights (refusing a symlink
// in any component when b.NoSymlinks, and a file other than b.ID), clones
// the mount tree there and sets the bind's flags on the clone, with an
// idmapping when the source's owner is not the sandbox's host uid and gid.
func prepareBind(b Bind, hostUID, hostGID int, maps *IDMaps) (*detachedBind, error) {
	var fd int
	var err error
	if b.NoSymlinks {
		fd, err = openNoSymlinks(b.Source)
	} else {
		fd, err = unix.Open(b.Source, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			err = fmt.Errorf("bind %s: %w", b.Source, err)
		}
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("bind %s: %w", b.Source, err)
	}
	if b.ID != nil {
		if id := (FileID{Dev: st.Dev, Ino: st.Ino}); id != *b.ID {
			return nil, fmt.Errorf("bind %s: the path names another file (%s) than the one checked (%s); nothing was mounted", b.Source, id, *b.ID)
		}
	}
	attr := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
	if b.Writable {
		attr |= unix.MOUNT_ATTR_NOEXEC
	} else {
		attr |= unix.MOUNT_ATTR_RDONLY
	}
	tree, err := cloneTree(fd, b.Source, st, attr, hostUID, hostGID, maps)
	if err != nil {
		return nil, err
	}
	return &detachedBind{tree: tree, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, nil
}

// cloneTree clones the mount tree at fd (the file p, with stat st) as a
// detached mount and sets attr on it, with an idmapping to hostUID and
// hostGID when the owner needs one (idmapped).
func cloneTree(fd int, p string, st unix.Stat_t, attr uint64, hostUID, hostGID int, maps *IDMaps) (*os.File, error) {
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return nil, fmt.Errorf("bind %s: clone the mount: %w", p, err)
	}
	ma := unix.MountAttr{Attr_set: attr}
	if idmapped(st, hostUID, hostGID) {
		ns, err := maps.userns(idmapKey{int(st.Uid), int(st.Gid), hostUID, hostGID})
		if err != nil {
			unix.Close(tree)
			return nil, &BindError{Path: p, UID: st.Uid, GID: st.Gid, Mode: st.Mode, HostUID: hostUID, Err: err}
		}
		ma.Attr_set |= unix.MOUNT_ATTR_IDMAP
		ma.Userns_fd = uint64(ns)
	}
	if ma.Attr_set != 0 {
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &ma); err != nil {
			unix.Close(tree)
			if ma.Attr_set&unix.MOUNT_ATTR_IDMAP != 0 {
				return nil, &BindError{Path: p, UID: st.Uid, GID: st.Gid, Mode: st.Mode, HostUID: hostUID, FSType: fsType(fd), Err: err}
			}
			return nil, fmt.Errorf("bind %s: set mount flags: %w", p, err)
		}
	}
	return os.NewFile(uintptr(tree), p), nil
}

// CheckBind prepares b as a root daemon's sandbox would (opened with the
// daemon's rights, cloned, flagged and idmapped to hostUID and hostGID
// where its owner needs it) and discards it: what `worker check`, `add`
// and a reload call so that a bind the kernel or file system cannot give
// is refused there, not at a call. A *BindError says the idmapping is
// what failed. An unprivileged daemon checks nothing here (its sandbox
// reaches the source as the daemon's own uid).
func CheckBind(b Bind, hostUID, hostGID int, maps *IDMaps) error {
	if os.Geteuid() != 0 {
		return nil
	}
	db, err := prepareBind(b, hostUID, hostGID, maps)
	if err != nil {
		return err
	}
	return db.tree.Close()
}

// MountMapped mounts the file f (a pinned bind source) on the existing
// mountpoint mp, recursively (read-only, every mount below included, if
// asked), idmapped to hostUID and hostGID where its owner needs it: the
// private bind a root daemon hands the Docker Engine, which binds it on
// into a container running as those ids.
func MountMapped(f *os.File, mp string, readOnly bool, hostUID, hostGID int, maps *IDMaps) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	attr := uint64(0)
	if readOnly {
		attr = unix.MOUNT_ATTR_RDONLY
	}
	tree, err := cloneTree(int(f.Fd()), f.Name(), st, attr, hostUID, hostGID, maps)
	if err != nil {
		return err
	}
	defer tree.Close()
	if err := unix.MoveMount(int(tree.Fd()), "", unix.AT_FDCWD, mp, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("bind %s on %s: move_mount: %w", f.Name(), mp, err)
	}
	return nil
}

// idmapped reports whether a source with stat st needs an idmapping to be
// the sandbox's root's: its owner is not the host uid and gid. A source
// root owns is never mapped: root's files (0600 ones too) would become
// the sandbox's own, and what it wrote would land as root's.
func idmapped(st unix.Stat_t, hostUID, hostGID int) bool {
	if st.Uid == 0 {
		return false
	}
	return int(st.Uid) != hostUID || int(st.Gid) != hostGID
}

// BindError says that a bind source cannot be shown to the sandbox as
// its own: the kernel or the file system cannot idmap it.
type BindError struct {
	Path    string
	UID     uint32
	GID     uint32
	Mode    uint32
	HostUID int
	FSType  string
	Err     error
}

func (e *BindError) Error() string {
	fs := ""
	if e.FSType != "" {
		fs = " on " + e.FSType
	}
	return fmt.Sprintf("%s (owner %s, mode %04o%s): cannot map its owner to the sandbox's user (uid %d): %v; "+
		"put it on a file system that supports idmapped mounts (ext4, xfs, btrfs, tmpfs, on Linux 5.12 or later; not NFS or FUSE), "+
		"run the daemon as uid %d, or chown it to uid %d",
		e.Path, ownerName(e.UID), e.Mode&07777, fs, e.HostUID, e.Err, e.UID, e.HostUID)
}

func (e *BindError) Unwrap() error { return e.Err }

func ownerName(uid uint32) string {
	s := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(s); err == nil {
		return u.Username + " (uid " + s + ")"
	}
	return "uid " + s
}

// fsType names the file system fd is on, for messages.
func fsType(fd int) string {
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return ""
	}
	switch sfs.Type {
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs"
	case unix.NFS_SUPER_MAGIC:
		return "nfs"
	case unix.FUSE_SUPER_MAGIC:
		return "fuse"
	case unix.RAMFS_MAGIC:
		return "ramfs"
	}
	return fmt.Sprintf("file system 0x%x", sfs.Type)
}

// mountDetached moves a tree the daemon prepared to dst (made to match:
// a directory or a file). It runs in the launcher.
func mountDetached(fd int, dir bool, dst string) error {
	if err := makeTarget(dst, dir); err != nil {
		return err
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}
