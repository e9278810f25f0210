// Command toolcage-sandbox is the lean sandbox launcher: pid 1 of every
// sandboxed executor when the daemon is configured with it (the executor
// binary can launch itself, but a small launcher starts in a fraction of
// the time and memory). Build it like the executor: CGO_ENABLED=0, static.
package main

import (
	"fmt"
	"os"

	"github.com/toolcage/toolcage/executors/sandbox"
)

func main() {
	sandbox.Init()
	fmt.Fprintln(os.Stderr, "toolcage-sandbox: the toolcage daemon starts this as a sandbox launcher; it does nothing on its own")
	os.Exit(2)
}
