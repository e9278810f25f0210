package worker

import (
	"errors"
	"path/filepath"

	"github.com/toolcage/toolcage/internal/filetrust"
)

// CheckTrust refuses w when anyone but pol's owners can change a file it
// was read from, or a directory its tool_files look in (a file added
// there becomes one of the person's tools): the worker file, each tool
// file, and each pattern's literal directory, with every directory above
// them (filetrust's rules). The error is forbidden and names the file,
// its owner and mode.
func (w *Worker) CheckTrust(pol filetrust.Policy) error {
	var errs []error
	blamed := map[string]bool{} // one line per path at fault
	check := func(what, path string) {
		err := pol.Check(what, path)
		var e *filetrust.Error
		if errors.As(err, &e) {
			if blamed[e.Path] {
				return
			}
			blamed[e.Path] = true
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	check("worker file", w.Path)
	for _, t := range w.LocalTools {
		if filepath.IsAbs(t.File) { // not a toolset's ("toolset:exec")
			check("tool file", t.File)
		}
	}
	for _, p := range w.ToolFiles {
		check("tool_files directory", literalDir(filepath.Join(filepath.Dir(w.Path), p)))
	}
	return errors.Join(errs...)
}

// literalDir is the longest leading directory of pattern with no glob
// syntax: where the pattern lists files.
func literalDir(pattern string) string {
	dir := filepath.Dir(pattern)
	for hasMeta(dir) {
		dir = filepath.Dir(dir)
	}
	return dir
}
