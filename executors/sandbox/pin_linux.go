package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Pin opens p (O_PATH) refusing a symlink in any of its components, as
// the sandbox's binds do, and returns the open file and its FileID. A
// runner that hands a mount source to someone else (the Docker Engine)
// pins it first and hands over what it opened, never the path.
func Pin(p string) (*os.File, FileID, error) {
	fd, err := openNoSymlinks(p)
	if err != nil {
		return nil, FileID{}, err
	}
	id, err := fdID(fd)
	if err != nil {
		unix.Close(fd)
		return nil, FileID{}, fmt.Errorf("bind %s: %w", p, err)
	}
	return os.NewFile(uintptr(fd), p), id, nil
}

// PinID is the FileID p names now, walked as Pin walks it.
func PinID(p string) (FileID, error) {
	f, id, err := Pin(p)
	if err != nil {
		return FileID{}, err
	}
	f.Close()
	return id, nil
}

func fdID(fd int) (FileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return FileID{}, err
	}
	return FileID{Dev: st.Dev, Ino: st.Ino}, nil
}

// statTarget is what is mounted at p as this process sees it: the file
// (p itself, never a symlink there followed) and whether its mount is
// read-only. The check and the stat are one open.
func statTarget(p string) MountStat {
	ms := MountStat{Path: p}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		ms.Err = err.Error()
		return ms
	}
	defer unix.Close(fd)
	if ms.ID, err = fdID(fd); err != nil {
		ms.Err = err.Error()
		return ms
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		ms.Err = err.Error()
		return ms
	}
	ms.ReadOnly = sfs.Flags&unix.ST_RDONLY != 0
	return ms
}
