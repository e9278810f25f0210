package dispatch

import (
	"fmt"

	"github.com/toolcage/toolcage/errdefs"
	fsexec "github.com/toolcage/toolcage/executors/fs"
	"github.com/toolcage/toolcage/internal/filediff"
	"github.com/toolcage/toolcage/toolspec"
)

// fileChange shows a filesystem write, edit or delete as the diff
// against the file in the workspace now, for the approval it parks in:
// read through the fs executor's own path checks (fsexec.Preview), with
// the daemon's rights, changing nothing. "" for other operations. (Here,
// not in daemon/kind/fs: the kinds stay free of the executors' RPC
// stack, which the catalog links.)
func fileChange(workspace string, f *toolspec.FSCall) string {
	if f == nil || workspace == "" {
		return ""
	}
	switch f.Op {
	case toolspec.FSWriteFile, toolspec.FSEditFile, toolspec.FSDeleteFile:
	default:
		return ""
	}
	ch, err := fsexec.Preview(workspace, f, filediff.MaxInput)
	if errdefs.CodeOf(err) == errdefs.LimitExceeded {
		return fmt.Sprintf("%s %s: the file is over the diff cap of %d bytes; not shown", f.Op, f.Path, filediff.MaxInput)
	}
	if err != nil {
		return fmt.Sprintf("%s: the change cannot be shown: %v", f.Op, err)
	}
	return filediff.Unified(ch.Path, filediff.File{Data: ch.Old, Exists: ch.OldExists}, filediff.File{Data: ch.New, Exists: ch.NewExists})
}
