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
// engine binds.
func bindFD(f *os.File, mp string, maps *sandbox.IDMaps) error {
	if os.Geteuid() == 0 {
		// A root daemon's containers run as nobody: the source is shown
		// to them as theirs (an idmapped mount) when someone else owns it.
		uid, gid := mountUser()
		return sandbox.MountMapped(f, mp, uid, gid, maps)
	}
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	err := unix.Mount(src, mp, "", unix.MS_BIND|unix.MS_REC, "")
	if errors.Is(err, unix.EPERM) {
		return errCannotMount
	}
	if err != nil {
		return fmt.Errorf("bind on %s: %w", mp, err)
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
