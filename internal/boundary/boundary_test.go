package boundary

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/toolcage/toolcage"

// deps lists the packages pkg links, as the go command sees them.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
	}
	return strings.Fields(string(out))
}

// under reports whether path is prefix or a package below it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func TestImportBoundaries(t *testing.T) {
	rpcStack := []string{
		module + "/executors",
		"google.golang.org/grpc",
		"google.golang.org/protobuf",
		"github.com/hashicorp/go-plugin",
	}
	tests := []struct {
		pkg string
		// must be linked: proves the list is the real one, not empty
		need []string
		// may not be linked (nor anything below them) ...
		forbid []string
		// ... except these
		allow []string
		// leaf: links no other package of ours
		leaf bool
	}{
		{pkg: "./daemon/api", need: []string{module + "/errdefs"}, forbid: rpcStack},
		{pkg: "./daemon/catalog", need: []string{module + "/errdefs", module + "/principal", module + "/toolspec"}, forbid: rpcStack},
		// which tools a caller sees is decided below the call pipeline and
		// every entry point, and links none of them nor the executors
		// the config reads settings; it runs none of the servers or the pipeline
		{pkg: "./daemon/config", need: []string{module + "/configs"},
			forbid: []string{module + "/daemon/dispatch", module + "/daemon/mcp", module + "/daemon/ui", module + "/executors/host"}},
		// the socket API's handlers are served by the daemon, never the
		// other way round, and reach executors only through the dispatcher
		{pkg: "./daemon/apiserver", need: []string{module + "/daemon/dispatch", module + "/daemon/visible"},
			forbid: []string{module + "/daemon", module + "/cmd"},
			allow: []string{module + "/daemon/apiserver", module + "/daemon/api", module + "/daemon/catalog", module + "/daemon/changes",
				module + "/daemon/config", module + "/daemon/defs", module + "/daemon/dispatch", module + "/daemon/egress", module + "/daemon/events",
				module + "/daemon/kind", module + "/daemon/mcp", module + "/daemon/toolset", module + "/daemon/ui", module + "/daemon/visible",
				module + "/daemon/webhook", module + "/daemon/worker"}},
		{pkg: "./daemon/visible", need: []string{module + "/daemon/catalog", module + "/daemon/worker", module + "/policy"},
			forbid: append([]string{module + "/daemon/dispatch", module + "/daemon/mcp", module + "/daemon/ui"}, rpcStack...)},
		// executors link only the guards they re-check
		{pkg: "./cmd/toolcage-executor", need: []string{module + "/policy/netguard", module + "/policy/jscheck"},
			forbid: []string{module + "/policy", module + "/daemon", module + "/store"},
			allow:  []string{module + "/policy/netguard", module + "/policy/jscheck"}},
		// policy and store import nothing of ours but the leaves
		{pkg: "./policy/...", need: []string{module + "/policy"},
			forbid: []string{module + "/daemon", module + "/executors", module + "/store", module + "/cmd"}},
		// the deny rules and the templates share only the shell front-end;
		// the deny rules read the metadata endpoints from the network
		// guard's one list of them
		{pkg: "./policy/shellguard", need: []string{module + "/policy/shellsyntax"},
			forbid: []string{module + "/policy"},
			allow:  []string{module + "/policy/shellguard", module + "/policy/shellsyntax", module + "/policy/netguard"}},
		{pkg: "./policy/template", need: []string{module + "/policy/shellsyntax"},
			forbid: []string{module + "/policy"},
			allow:  []string{module + "/policy/template", module + "/policy/shellsyntax"}},
		{pkg: "./policy/shellsyntax", need: []string{"mvdan.cc/sh/v3/syntax"}, leaf: true},
		{pkg: "./store/...", need: []string{module + "/store"},
			forbid: []string{module + "/daemon", module + "/executors", module + "/policy", module + "/cmd"}},
		// the event hub is a leaf; the webhook dials only through the guard
		{pkg: "./daemon/events", need: []string{"sync"}, leaf: true},
		{pkg: "./daemon/webhook", need: []string{module + "/policy/netguard"},
			forbid: []string{module + "/daemon", module + "/store", module + "/executors", module + "/policy"},
			allow:  []string{module + "/daemon/webhook", module + "/policy/netguard"}},
		{pkg: "./errdefs", need: []string{"errors"}, leaf: true},
		{pkg: "./principal", need: []string{module + "/principal"}, leaf: true},
		{pkg: "./toolspec", need: []string{"time"}, leaf: true},
		// making agent text safe to show is a leaf the CLI and the page share
		{pkg: "./internal/termsafe", need: []string{"unicode/utf8"}, leaf: true},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			got := deps(t, tt.pkg)
			for _, n := range tt.need {
				if !slices.Contains(got, n) {
					t.Errorf("%s does not link %s; is the list right? %v", tt.pkg, n, got)
				}
			}
			for _, p := range got {
				if slices.ContainsFunc(tt.allow, func(a string) bool { return under(p, a) }) {
					continue
				}
				for _, f := range tt.forbid {
					if under(p, f) {
						t.Errorf("%s links %s (forbidden: %s)", tt.pkg, p, f)
					}
				}
				if tt.leaf && under(p, module) && p != module+strings.TrimPrefix(tt.pkg, ".") {
					t.Errorf("%s links %s: it must import no package of ours", tt.pkg, p)
				}
			}
		})
	}
}
