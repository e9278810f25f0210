// Command toolcage-executor runs one kind of tool (js, shell, http or fs) as a
// go-plugin executor. The daemon starts it; run by hand it explains itself.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/fs"
	httpexec "github.com/toolcage/toolcage/executors/http"
	"github.com/toolcage/toolcage/executors/js"
	"github.com/toolcage/toolcage/executors/sandbox"
	"github.com/toolcage/toolcage/executors/shell"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "toolcage-executor:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	// In a sandboxed start this sets the sandbox up (and, as its launcher,
	// never returns); otherwise it returns at once.
	sandbox.Init()
	fs := flag.NewFlagSet("toolcage-executor", flag.ContinueOnError)
	kind := fs.String("kind", os.Getenv("TOOLCAGE_EXECUTOR_KIND"), "executor kind to serve: js, shell, http or fs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if os.Getenv("GOMAXPROCS") == "" {
		// One call at a time: a second P would only spin between calls, and
		// with a pool of executors on a few cores that spinning adds up.
		runtime.GOMAXPROCS(1)
	}
	impl, err := newExecutor(executors.Kind(*kind))
	if err != nil {
		return err
	}
	if os.Getenv(executors.Handshake.MagicCookieKey) != executors.Handshake.MagicCookieValue {
		return errors.New("this binary is started by the toolcage daemon, not by hand")
	}
	executors.Serve(impl)
	return nil
}

func newExecutor(kind executors.Kind) (executors.Executor, error) {
	switch kind {
	case executors.KindJS:
		return js.New(js.Config{}), nil
	case executors.KindShell:
		return shell.New(shell.Config{}), nil
	case executors.KindHTTP:
		return httpexec.New(httpexec.Config{}), nil
	case executors.KindFS:
		return fs.New(), nil
	case "":
		return nil, errors.New("--kind is required (js, shell, http or fs)")
	}
	return nil, fmt.Errorf("executor kind %q is not available in this build", kind)
}
