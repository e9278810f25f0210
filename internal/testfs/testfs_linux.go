package testfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// fsImmutableFL is FS_IMMUTABLE_FL (linux/fs.h): no entry of a directory
// that has it can be made, renamed or deleted, by root either.
const fsImmutableFL = 0x10

// immutable sets the immutable flag on dir.
func immutable(dir string) (func(), error) {
	flags, err := setFlags(dir, fsImmutableFL, true)
	if err != nil {
		return nil, err
	}
	return func() { _, _ = setFlags(dir, flags, false) }, nil
}

// setFlags ORs add into dir's inode flags (set false: writes them as
// they are given) and returns the flags it found.
func setFlags(dir string, flags uint32, add bool) (uint32, error) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	old, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		return 0, &os.PathError{Op: "FS_IOC_GETFLAGS", Path: dir, Err: err}
	}
	next := flags
	if add {
		next |= old
	}
	if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(next)); err != nil {
		return 0, &os.PathError{Op: "FS_IOC_SETFLAGS", Path: dir, Err: err}
	}
	return old, nil
}
