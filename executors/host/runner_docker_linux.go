package host

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/toolcage/toolcage/executors/sandbox"
)

// errCannotMount: this daemon may not make mounts (not root); the
// engine gets the source path instead.
var errCannotMount = errors.New("cannot mount")

// bindFD binds the file f was opened on (through its descriptor's magic
// link, so nothing is walked by path again) on mp, recursively as the
// engine binds, and read-only (every mount below included) if asked: the
// container's bind of it inherits that. A root daemon's containers run as
// nobody: it shows them the source as theirs (an idmapped mount) when
// someone else owns it (sandbox.MountMapped).
func bindFD(f *os.File, mp string, readOnly bool, maps *sandbox.IDMaps) error {
	if os.Geteuid() == 0 {
		uid, gid := mountUser()
		err := sandbox.MountMapped(f, mp, readOnly, uid, gid, maps)
		if !errors.Is(err, unix.ENOSYS) { // before Linux 5.12: a plain bind below
			return err
		}
	}
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	err := unix.Mount(src, mp, "", unix.MS_BIND|unix.MS_REC, "")
	if errors.Is(err, unix.EPERM) {
		return errCannotMount
	}
	if err != nil {
		return fmt.Errorf("bind on %s: %w", mp, err)
	}
	if readOnly {
		err := unix.MountSetattr(unix.AT_FDCWD, mp, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
		if errors.Is(err, unix.ENOSYS) { // before Linux 5.12: the top mount only, as the engine's own ro
			err = unix.Mount("", mp, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, "")
		}
		if err != nil {
			unix.Unmount(mp, unix.MNT_DETACH)
			return fmt.Errorf("read-only bind on %s: %w", mp, err)
		}
	}
	return nil
}

// unbindPrivate detaches the mount at mp (containers keep their copies:
// their binds do not propagate) and removes mp.
func unbindPrivate(mp string) error {
	if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return os.Remove(mp)
}
