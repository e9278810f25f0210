package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// program is one resolved command, ready to start.
type program struct {
	path     string   // file to execute
	argv     []string // argv, argv[0] as the tool wrote it
	env      []string
	dir      string
	viaShell bool // argv is Shell -c -- Command
}

// errCommandNotFound reports a name found in no directory of the fixed
// PATH. It wraps fs.ErrNotExist.
var errCommandNotFound = fmt.Errorf("command not found: %w", fs.ErrNotExist)

// checkCall checks the shape of a shell call: exactly one of Argv and
// Command, and no NUL bytes, which cannot cross execve.
func checkCall(c *executors.ShellCall) error {
	hasArgv, hasCommand := len(c.Argv) > 0, c.Command != ""
	switch {
	case hasArgv && hasCommand:
		return errdefs.Errorf(errdefs.InvalidArguments, "shell: call sets both argv and command; exactly one is allowed")
	case !hasArgv && !hasCommand:
		return errdefs.Errorf(errdefs.InvalidArguments, "shell: call sets neither argv nor command")
	case hasArgv && c.Argv[0] == "":
		return errdefs.Errorf(errdefs.InvalidArguments, "shell: argv[0] is empty")
	}
	for i, a := range c.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return errdefs.Errorf(errdefs.InvalidArguments, "shell: argv[%d] contains a NUL byte", i)
		}
	}
	if strings.IndexByte(c.Command, 0) >= 0 {
		return errdefs.Errorf(errdefs.InvalidArguments, "shell: command contains a NUL byte")
	}
	return nil
}

// checkDir checks a call's working directory: an absolute path to an
// existing directory. A relative path would be relative to wherever the
// executor happens to run, which means nothing to a tool.
func checkDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return errdefs.Errorf(errdefs.InvalidArguments, "shell: dir %q is not an absolute path", dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errdefs.Errorf(errdefs.InvalidArguments, "shell: dir %q does not exist", dir)
		}
		return errdefs.Errorf(errdefs.InvalidArguments, "shell: dir %q: %v", dir, err)
	}
	if !fi.IsDir() {
		return errdefs.Errorf(errdefs.InvalidArguments, "shell: dir %q is not a directory", dir)
	}
	return nil
}

// lookPath finds the file to execute for name. A name with a slash is used
// as it is, relative to dir (where the command will run); any other name is
// looked up in the fixed PATH, never the executor's own. Like a shell, the
// search skips files without an execute bit; whether the file found can
// really be executed is left to execve.
func lookPath(name, dir string) (string, error) {
	if strings.Contains(name, "/") {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if _, err := os.Stat(path); err != nil {
			return "", err
		}
		return path, nil
	}
	for _, d := range filepath.SplitList(fixedPath) {
		path := filepath.Join(d, name)
		fi, err := os.Stat(path)
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return path, nil
		}
	}
	return "", errCommandNotFound
}
