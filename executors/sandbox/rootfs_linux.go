package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// execPath is how the sandbox reaches the executor binary: through the
// descriptor the daemon opened. The binary is never mounted (a bind from a
// descriptor of another mount namespace is refused), so the sandbox uid
// needs no access to its directory, and a Landlock rule names its inode.
var execPath = "/proc/self/fd/" + strconv.Itoa(fdBinary)

// systemDirs are bound read-only (or recreated as symlinks, for merged-usr
// layouts where /bin is a link to usr/bin).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}

// etcEntries are the only host files of /etc the sandbox sees: what the
// dynamic linker, name resolution, TLS and time zones need. No passwd,
// shadow, group or anything secret: passwd, group, hostname and hosts are
// written fresh.
var etcEntries = []string{
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf", "host.conf", "gai.conf",
	"protocols", "services", "localtime", "timezone", "mime.types",
	"ssl", "ca-certificates", "pki", "crypto-policies", "alternatives",
}

// buildRoot makes the sandbox's file system and pivots into it. It runs in
// the launcher: pid 1 of the new pid namespace, root of the new user
// namespace, in a private copy of the daemon's mount namespace.
func buildRoot(lc *launchConfig) error {
	root := lc.Root
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=4m,nr_inodes=4096"); err != nil {
		return fmt.Errorf("mount root tmpfs: %w", err)
	}
	in := func(p string) string { return filepath.Join(root, p) }

	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, in(d)); err != nil {
				return err
			}
		case fi.IsDir():
			if err := bind(d, in(d), bindRO|bindNoDev); err != nil {
				return err
			}
		}
	}

	if err := os.Mkdir(in("/etc"), 0o755); err != nil {
		return err
	}
	etc := etcEntries
	if lc.Network {
		etc = append(etc, "resolv.conf")
	}
	for _, e := range etc {
		src := filepath.Join("/etc", e)
		if _, err := os.Stat(src); err != nil {
			continue // absent, or a dangling link
		}
		if err := bind(src, in(src), bindRO|bindNoDev|bindNoExec); err != nil {
			return err
		}
	}
	home := lc.WorkDir
	files := map[string]string{
		"/etc/passwd":   "root:x:0:0:root:" + home + ":/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"/etc/group":    "root:x:0:\nnogroup:x:65534:\n",
		"/etc/hostname": hostname + "\n",
		"/etc/hosts":    "127.0.0.1\tlocalhost " + hostname + "\n::1\tlocalhost ip6-localhost ip6-loopback\n",
	}
	for p, content := range files {
		if err := os.WriteFile(in(p), []byte(content), 0o644); err != nil {
			return err
		}
	}

	tmpfs := func(p, mode string, size int64, flags uintptr) error {
		if err := os.MkdirAll(in(p), 0o755); err != nil {
			return err
		}
		opts := "mode=" + mode + ",size=" + strconv.FormatInt(size, 10) + ",nr_inodes=65536"
		if err := unix.Mount("tmpfs", in(p), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|flags, opts); err != nil {
			return fmt.Errorf("mount tmpfs on %s: %w", p, err)
		}
		return nil
	}
	if err := tmpfs("/tmp", "1777", lc.TmpBytes, unix.MS_NOEXEC); err != nil {
		return err
	}
	if err := tmpfs(lc.WorkDir, "0755", lc.TmpBytes, unix.MS_NOEXEC); err != nil {
		return err
	}

	// /dev: a tmpfs holding four device nodes bound from the host (a user
	// namespace cannot mknod), the usual links, and a private /dev/shm.
	if err := os.Mkdir(in("/dev"), 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", in("/dev"), "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, d := range devices {
		if err := bind("/dev/"+d, in("/dev/"+d), 0); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, in("/dev/"+name)); err != nil {
			return err
		}
	}
	if err := tmpfs("/dev/shm", "1777", lc.TmpBytes, unix.MS_NOEXEC); err != nil {
		return err
	}

	// /proc of the new pid namespace. It must be mounted while the daemon's
	// full /proc is still visible (the kernel refuses a proc mount in a user
	// namespace that would reveal more than its owner can already see).
	if err := os.Mkdir(in("/proc"), 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", in("/proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}

	if lc.SocketDir != "" {
		if err := bind(lc.SocketDir, in(lc.SocketDir), bindNoDev|bindNoExec); err != nil {
			return err
		}
	}
	for i, b := range lc.Binds {
		t := b.Target
		if t == "" {
			t = b.Source
		}
		if i < len(lc.BindFDs) && lc.BindFDs[i] > 0 {
			// Opened, cloned and flagged by the daemon (prepareBind).
			err := mountDetached(lc.BindFDs[i], lc.BindDirs[i], in(t))
			unix.Close(lc.BindFDs[i])
			if err != nil {
				return fmt.Errorf("bind %s: %w", b.Source, err)
			}
			continue
		}
		flags := bindNoDev | bindRO
		if b.Writable {
			flags = bindNoDev | bindNoExec
		}
		src := b.Source
		if b.NoSymlinks {
			fd, err := openNoSymlinks(b.Source)
			if err != nil {
				return err
			}
			if b.ID != nil {
				if id, err := fdID(fd); err != nil || id != *b.ID {
					unix.Close(fd)
					return fmt.Errorf("bind %s: the path names another file (%s) than the one checked (%s); nothing was mounted", b.Source, id, *b.ID)
				}
			}
			// The descriptor's magic link names exactly what was opened.
			src = "/proc/self/fd/" + strconv.Itoa(fd)
			err = bind(src, in(t), flags)
			unix.Close(fd)
			if err != nil {
				return fmt.Errorf("bind %s: %w", b.Source, err)
			}
			continue
		}
		if err := bind(src, in(t), flags); err != nil {
			return err
		}
	}

	// Swap roots: the new root is stacked over the old one, which is then
	// detached, so nothing of the host's tree stays reachable.
	if err := unix.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	for _, p := range []string{"/", "/dev"} {
		if err := setAttr(p, unix.MOUNT_ATTR_RDONLY, false); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	return nil
}

const hostname = "toolcage"

var devices = []string{"null", "zero", "random", "urandom"}

type bindFlags int

const (
	bindRO bindFlags = 1 << iota
	bindNoDev
	bindNoExec
)

// bind mounts src on dst (recursively), creating dst as a file or directory
// to match src, and applies the flags to the whole bound tree.
func bind(src, dst string, flags bindFlags) error {
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	if err := makeTarget(dst, fi.IsDir()); err != nil {
		return err
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	attr := uint64(unix.MOUNT_ATTR_NOSUID)
	if flags&bindRO != 0 {
		attr |= unix.MOUNT_ATTR_RDONLY
	}
	if flags&bindNoDev != 0 {
		attr |= unix.MOUNT_ATTR_NODEV
	}
	if flags&bindNoExec != 0 {
		attr |= unix.MOUNT_ATTR_NOEXEC
	}
	if err := setAttr(dst, attr, true); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	return nil
}

// makeTarget makes the mount point dst: a directory, or an empty file.
func makeTarget(dst string, dir bool) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	var err error
	if dir {
		err = os.Mkdir(dst, 0o755)
	} else {
		var f *os.File
		f, err = os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
		}
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// setAttr adds mount attributes to the mount at p (and every mount below
// it when recursive) with mount_setattr, or, before Linux 5.12, with a
// remount of the top mount that keeps the flags a user namespace may not
// clear.
func setAttr(p string, attr uint64, recursive bool) error {
	flags := uint(0)
	if recursive {
		flags = unix.AT_RECURSIVE
	}
	err := unix.MountSetattr(unix.AT_FDCWD, p, flags, &unix.MountAttr{Attr_set: attr})
	if !errors.Is(err, unix.ENOSYS) {
		return err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return err
	}
	ms := uintptr(unix.MS_BIND | unix.MS_REMOUNT)
	for _, m := range []struct {
		st int64
		ms uintptr
	}{{unix.ST_RDONLY, unix.MS_RDONLY}, {unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME},
		{unix.ST_RELATIME, unix.MS_RELATIME}} {
		if st.Flags&m.st != 0 {
			ms |= m.ms
		}
	}
	for _, m := range []struct {
		attr uint64
		ms   uintptr
	}{{unix.MOUNT_ATTR_RDONLY, unix.MS_RDONLY}, {unix.MOUNT_ATTR_NOSUID, unix.MS_NOSUID},
		{unix.MOUNT_ATTR_NODEV, unix.MS_NODEV}, {unix.MOUNT_ATTR_NOEXEC, unix.MS_NOEXEC}} {
		if attr&m.attr != 0 {
			ms |= m.ms
		}
	}
	return unix.Mount("", p, "", ms, "")
}

// loopbackUp brings up lo in the sandbox's own network namespace: local
// servers a tool starts for itself work; nothing outside is reachable.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// CheckNoSymlinks refuses p when any component of it is a symlink now,
// walking it as the sandbox's binds do (openat2 RESOLVE_NO_SYMLINKS). It
// is Pin keeping nothing: a runner that hands a source to someone else
// (the Docker Engine) pins it and hands over what it opened, never the
// path.
func CheckNoSymlinks(p string) error {
	fd, err := openNoSymlinks(p)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// openNoSymlinks opens p (O_PATH) refusing a symlink in any of its
// components: a bind source resolved when it was checked that has since
// become a symlink is refused, never followed.
func openNoSymlinks(p string) (int, error) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
	if err == nil {
		return fd, nil
	}
	if !errors.Is(err, unix.ENOSYS) {
		if errors.Is(err, unix.ELOOP) {
			return -1, fmt.Errorf("bind %s: a component of the path has become a symlink since it was checked", p)
		}
		return -1, fmt.Errorf("bind %s: %w", p, err)
	}
	// Before Linux 5.6: walk the components, each opened O_NOFOLLOW.
	fd, err = unix.Open("/", unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, err
	}
	for _, c := range strings.Split(strings.Trim(filepath.Clean(p), "/"), "/") {
		if c == "" {
			continue
		}
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("bind %s: %w", p, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			return -1, fmt.Errorf("bind %s: a component of the path has become a symlink since it was checked", p)
		}
		fd = next
	}
	return fd, nil
}
