// Package filetrust decides whether a file the daemon reads as its own
// (a worker file, a tool file, the config) is controlled only by the
// person running it, as OpenSSH's StrictModes does for authorized_keys:
// the file and every directory on its way from / (symbolic links
// followed, each link's directory checked too) must be owned by a
// trusted user (the daemon's own user or root) and writable by nobody
// else. A directory writable by others with the sticky bit (/tmp) is
// allowed, but what is looked up in it must be owned by a trusted user.
//
// Group-writable is refused even when the group has one member, as
// OpenSSH does: group membership changes without the file changing.
package filetrust

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/toolcage/toolcage/errdefs"
)

// maxLinks bounds the symbolic links one check follows (the kernel's 40).
const maxLinks = 40

// Policy names the users whose files are trusted.
type Policy struct {
	// Owners are the trusted uids.
	Owners []uint32
}

// ForProcess trusts this process's effective user and root.
func ForProcess() Policy {
	euid := uint32(os.Geteuid())
	if euid == 0 {
		return Policy{Owners: []uint32{0}}
	}
	return Policy{Owners: []uint32{euid, 0}}
}

// Error says which path on the way to File is not trusted, and why.
type Error struct {
	What   string // what File is ("worker file")
	File   string // the file asked about
	Path   string // the file or directory at fault (File or one on its way)
	Owner  uint32
	Mode   uint32 // permission bits, with setuid, setgid and sticky
	IsDir  bool
	Reason string // "is writable by its group", "is owned by another user"…
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.What != "" {
		b.WriteString(e.What + " ")
	}
	b.WriteString(e.File)
	b.WriteString(": ")
	if e.Path != e.File {
		if e.IsDir {
			b.WriteString("directory ")
		}
		b.WriteString(e.Path + " ")
	}
	fmt.Fprintf(&b, "%s (owner %s, mode %04o %s); toolcage reads it only when no one but the daemon's user and root can change it or a directory above it",
		e.Reason, ownerName(e.Owner), e.Mode, modeString(e.Mode, e.IsDir))
	return b.String()
}

// Check returns nil when path (a file or directory) is trusted, and else
// a forbidden *errdefs.Error wrapping an *Error; what names the file in
// the message ("worker file"). A path that cannot be looked up returns
// the lookup's error.
func (p Policy) Check(what, path string) error {
	// Not filepath.Abs: cleaning "link/.." lexically is not what opening
	// the path does.
	abs := path
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		abs = wd + "/" + path
	}
	e, err := p.walk(abs)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	if e != nil {
		e.What, e.File = what, path
		return &errdefs.Error{Code: errdefs.Forbidden, Err: e}
	}
	return nil
}

// walk resolves abs one component at a time, as the kernel does, and
// checks every directory it looks in and what it finds at the end.
func (p Policy) walk(abs string) (*Error, error) {
	cur := "/"
	st, err := lstat(cur)
	if err != nil {
		return nil, err
	}
	if e := p.node(cur, st, true); e != nil {
		return e, nil
	}
	open := opensticky(st) // cur lets others add entries (sticky)
	rest := split(abs)
	links := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			// cur and its parents were checked on the way in.
			cur = filepath.Dir(cur)
			if st, err = lstat(cur); err != nil {
				return nil, err
			}
			open = opensticky(st)
			continue
		}
		next := filepath.Join(cur, name)
		st, err := lstat(next)
		if err != nil {
			return nil, err
		}
		if open && !p.trusted(st.Uid) {
			return &Error{Path: next, Owner: st.Uid, Mode: st.Mode & 0o7777, IsDir: isDir(st),
				Reason: fmt.Sprintf("is owned by another user in %s, which anyone may add to", cur)}, nil
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
			if links++; links > maxLinks {
				return nil, &fs.PathError{Op: "resolve", Path: abs, Err: syscall.ELOOP}
			}
			target, err := os.Readlink(next)
			if err != nil {
				return nil, err
			}
			if filepath.IsAbs(target) {
				cur = "/"
				if st, err = lstat(cur); err != nil {
					return nil, err
				}
				open = opensticky(st)
			}
			rest = append(split(target), rest...)
			continue
		}
		dir := isDir(st)
		if e := p.node(next, st, dir); e != nil {
			return e, nil
		}
		if !dir {
			// Anything after a file, a trailing slash too, is the
			// kernel's ENOTDIR.
			if len(rest) > 0 {
				return nil, &fs.PathError{Op: "resolve", Path: abs, Err: syscall.ENOTDIR}
			}
			return nil, nil
		}
		cur, open = next, opensticky(st)
	}
	return nil, nil
}

// node checks one file or directory's owner and mode.
func (p Policy) node(path string, st *syscall.Stat_t, dir bool) *Error {
	e := &Error{Path: path, Owner: st.Uid, Mode: st.Mode & 0o7777, IsDir: dir}
	switch {
	case !p.trusted(st.Uid):
		e.Reason = "is owned by another user"
	case dir && st.Mode&syscall.S_ISVTX != 0 && st.Mode&0o022 != 0:
		return nil // like /tmp: others may add, but not replace what is ours
	case st.Mode&0o002 != 0:
		e.Reason = "is writable by everyone"
	case st.Mode&0o020 != 0:
		e.Reason = "is writable by its group"
	default:
		return nil
	}
	return e
}

func (p Policy) trusted(uid uint32) bool { return slices.Contains(p.Owners, uid) }

// opensticky reports a directory others may add entries to, sticky: what
// is in it must then be a trusted user's own.
func opensticky(st *syscall.Stat_t) bool {
	return st.Mode&syscall.S_ISVTX != 0 && st.Mode&0o022 != 0
}

func isDir(st *syscall.Stat_t) bool { return st.Mode&syscall.S_IFMT == syscall.S_IFDIR }

func lstat(path string) (*syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return &st, nil
}

func split(path string) []string { return strings.Split(path, "/") }

// ownerName is "1001 (bob)", or the uid alone when it has no name.
func ownerName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return id + " (" + u.Username + ")"
	}
	return id
}

// modeString is ls's rendering: drwxrwxrwt.
func modeString(mode uint32, dir bool) string {
	m := fs.FileMode(mode & 0o777)
	s := []byte(m.String())
	if dir {
		s[0] = 'd'
	}
	set := func(i int, bit uint32, lower, upper byte) {
		if mode&bit == 0 {
			return
		}
		if s[i] == 'x' {
			s[i] = lower
		} else {
			s[i] = upper
		}
	}
	set(3, syscall.S_ISUID, 's', 'S')
	set(6, syscall.S_ISGID, 's', 'S')
	set(9, syscall.S_ISVTX, 't', 'T')
	return string(s)
}

// Is reports whether err is a refusal of this package's.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
