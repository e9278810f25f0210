package fs

import (
	"errors"
	"os"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/toolspec"
)

// Change is what a write, edit or delete would do to its file.
type Change struct {
	Path      string // relative to the workspace, cleaned
	Old, New  []byte
	OldExists bool
	NewExists bool
}

// Preview reads what the write_file, edit_file or delete_file call c
// would change in the workspace whose host directory is hostRoot (c.Root
// is its path in the sandbox), through the checks the operation itself
// makes (the path's spelling, the root that refuses ways out, regular
// files only), and changes nothing. A current file over limit bytes is a
// limit_exceeded error; an edit that would fail gives the call's own
// error.
func Preview(hostRoot string, c *executors.FSCall, limit int64) (*Change, error) {
	p, err := relPath(c.Path, c.Root, false)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(hostRoot)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.Unavailable, "the workspace is not available: %v", err)
	}
	defer root.Close()
	call := *c
	if call.MaxWriteBytes <= 0 {
		call.MaxWriteBytes = DefaultMaxWriteBytes
	}
	ch := &Change{Path: cleanRel(p)}
	old, err := readCapped(root, p, limit, c.Op)
	var ce *errdefs.Error
	switch {
	case err == nil:
		ch.Old, ch.OldExists = old, true
	case errors.As(err, &ce) && ce.Code == errdefs.NotFound && c.Op == toolspec.FSWriteFile:
		// A new file (or a dangling link, which the write replaces).
	default:
		return nil, err
	}
	switch c.Op {
	case toolspec.FSWriteFile:
		ch.New, ch.NewExists = []byte(c.Content), true
	case toolspec.FSEditFile:
		updated, err := edited(p, string(old), &call)
		if err != nil {
			return nil, err
		}
		ch.New, ch.NewExists = []byte(updated), true
	case toolspec.FSDeleteFile:
	default:
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "fs executor: %q changes no file", c.Op)
	}
	return ch, nil
}
