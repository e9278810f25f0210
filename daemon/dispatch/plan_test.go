package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/configs"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/egress"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/policy/shellguard"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
	"github.com/toolcage/toolcage/toolspec"
)

// secretsFunc is a SecretReader made of a function.
type secretsFunc func(ctx context.Context, name string) ([]byte, error)

func (f secretsFunc) Secret(ctx context.Context, name string) ([]byte, error) { return f(ctx, name) }

const testSecret = "Zq8vK2mXw9rTj4Lp-s3cr3t"

// newPlanDispatcher is a dispatcher with a real store, catalog, deny
// rules and egress proxy (on 127.0.0.1), and one stored secret, "key".
func newPlanDispatcher(t *testing.T) *Dispatcher {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rules, err := shellguard.Load(configs.ShellRules)
	if err != nil {
		t.Fatal(err)
	}
	scr, err := scrub.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	guards := netguard.NewCache(8)
	proxy, err := egress.Listen(guards, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	secrets := secretsFunc(func(_ context.Context, name string) ([]byte, error) {
		if name != "key" {
			return nil, fmt.Errorf("secret %s: %w", name, store.ErrNotFound)
		}
		return json.Marshal(map[string]string{"value": testSecret})
	})
	return New(Config{Catalog: catalog.New(st), Store: st, Scrubber: scr, Secrets: secrets, Egress: proxy,
		ShellRules: rules, Guards: guards, AllowPrivateHosts: []string{"localhost"},
		Limits: map[toolspec.Kind]toolspec.Limits{toolspec.HTTP: {OutputBytes: 4096}}})
}

// TestPlanPerKind: each kind's call is planned in one step: its body, the
// permissions and reset its pool key gets, the secrets it uses and the
// scrubber that redacts them.
func TestPlanPerKind(t *testing.T) {
	d := newPlanDispatcher(t)
	for _, tt := range []struct {
		name, def, args string
		check           func(t *testing.T, p *plan)
	}{
		{"js", `{"name":"j","description":"d","kind":"js","secrets":["key"],"js":{"code":"return utils.getApiKey('key')"}}`, `{}`,
			func(t *testing.T, p *plan) {
				if p.req.JS == nil || p.req.Shell != nil || p.req.HTTP != nil || !strings.Contains(p.req.JS.Secrets["key"], testSecret) {
					t.Fatalf("js body %+v", p.req.JS)
				}
				if p.key.Reset || p.key.Kind != toolspec.JS || p.standIn != nil {
					t.Errorf("key %+v, stand-in %v", p.key, p.standIn)
				}
			}},
		{"shell", `{"name":"s","description":"d","kind":"shell","secrets":["key"],"shell":{"command":"echo {{.w}}","env":{"K":"{{secret.key}}"}}}`, `{"w":"a b"}`,
			func(t *testing.T, p *plan) {
				if sh := p.req.Shell; sh == nil || !slices.Equal(sh.Argv, []string{"echo", "a b"}) || sh.Env["K"] != testSecret {
					t.Fatalf("shell body %+v", p.req.Shell)
				}
				if !p.key.Reset || p.key.Kind != toolspec.Shell {
					t.Errorf("key %+v: a shell call's sandbox is reset", p.key)
				}
			}},
		{"http", `{"name":"h","description":"d","kind":"http","secrets":["key"],"http":{"method":"GET","url":"http://localhost:9/v1","headers":{"X-Key":"{{secret.key}}"},"allowed_domains":["localhost"]}}`, `{}`,
			func(t *testing.T, p *plan) {
				h := p.req.HTTP
				if h == nil || h.Headers["X-Key"] != testSecret || h.MaxResponseBytes != 4096 {
					t.Fatalf("http body %+v", h)
				}
				if p.key.Reset || p.key.Permissions != "network" {
					t.Errorf("key %+v: an http call gets the network, no reset", p.key)
				}
				s := p.standIn
				if s == nil || strings.Contains(s.Headers["X-Key"], testSecret) || s.Headers["X-Key"] == "" || s.URL != h.URL || s.MaxResponseBytes != 4096 {
					t.Fatalf("stand-in %+v", s)
				}
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			def, err := catalog.ParseJSON([]byte(tt.def))
			if err != nil {
				t.Fatal(err)
			}
			if err := catalog.Check(def); err != nil {
				t.Fatal(err)
			}
			res, err := catalog.Compile(&catalog.Tool{Def: def})
			if err != nil {
				t.Fatal(err)
			}
			c := &call{id: "c1", tool: def.Name, caller: principal.Caller{ID: "uid:1", Type: "user"}, args: json.RawMessage(tt.args)}
			p, err := d.plan(context.Background(), c, res)
			if err != nil {
				t.Fatal(err)
			}
			if p.key.Kind != def.Kind || p.req.Kind != def.Kind || p.req.CallID != "c1" {
				t.Errorf("request %+v under key %+v", p.req, p.key)
			}
			if got := p.scrubber(d).Scrub("x " + testSecret); strings.Contains(got, testSecret) {
				t.Errorf("the call's scrubber leaves its secret: %q", got)
			}
			tt.check(t, p)
		})
	}
}

// TestPlanRefusals: what the kind refuses comes back coded, with the
// call's scrubber once its secrets are known.
func TestPlanRefusals(t *testing.T) {
	d := newPlanDispatcher(t)
	for _, tt := range []struct {
		name, def, args string
		code            errdefs.Code
	}{
		{"shell with network not granted", `{"name":"n","description":"d","kind":"shell","permissions":["network"],"shell":{"command":"echo 1"}}`, `{}`, errdefs.PolicyDenied},
		{"secret not listed", `{"name":"u","description":"d","kind":"shell","shell":{"command":"echo {{secret.key}}"}}`, `{}`, errdefs.PolicyDenied},
		{"secret not stored", `{"name":"m","description":"d","kind":"shell","secrets":["other"],"shell":{"command":"echo {{secret.other}}"}}`, `{}`, errdefs.InvalidRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := planFor(t, d, tt.def, tt.args)
			var e *errdefs.Error
			if !errors.As(err, &e) || errdefs.CodeOf(err) != tt.code {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
		})
	}
}

// planFor plans a call of the tool def (JSON) with args.
func planFor(t *testing.T, d *Dispatcher, def, args string) (*plan, error) {
	t.Helper()
	td, err := catalog.ParseJSON([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	res, err := catalog.Compile(&catalog.Tool{Def: td})
	if err != nil {
		t.Fatal(err)
	}
	c := &call{id: "c1", tool: td.Name, caller: principal.Caller{ID: "uid:1", Type: "user"}, args: json.RawMessage(args)}
	return d.plan(context.Background(), c, res)
}

// TestPlanEgressInContainer: an HTTP call with secrets under isolation:
// docker runs on a key with Egress and without network (the container
// reaches the proxy through its socket), and its executor is sent to that
// socket; under process isolation, or without secrets, the call keeps the
// network and the proxy's loopback port.
func TestPlanEgressInContainer(t *testing.T) {
	d := newPlanDispatcher(t)
	tool := func(iso, secretHeader string) string {
		return `{"name":"h","description":"d","kind":"http","isolation":"` + iso + `",` + secretHeader +
			`"http":{"method":"GET","url":"http://localhost:9/v1","headers":{"X-Key":"{{secret.key}}"},"allowed_domains":["localhost"]}}`
	}
	for _, tt := range []struct {
		name, def, perms, addr string
		egress                 bool
	}{
		{"docker, secret", tool("docker", `"secrets":["key"],"permissions":["network"],`), "", executors.EgressUnixPrefix + "/run/toolcage-egress/egress.sock", true},
		{"process, secret", tool("process", `"secrets":["key"],`), "network", "127.0.0.1:", false},
		{"docker, no secret", strings.Replace(tool("docker", ""), "{{secret.key}}", "plain", 1), "network", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := planFor(t, d, tt.def, `{}`)
			if err != nil {
				t.Fatal(err)
			}
			if p.key.Egress != tt.egress || p.key.Permissions != tt.perms || !slices.Contains(p.req.Permissions, "network") {
				t.Fatalf("key %+v (request permissions %v): want Egress %v, permissions %q", p.key, p.req.Permissions, tt.egress, tt.perms)
			}
			if tt.addr == "" {
				if p.standIn != nil {
					t.Fatal("a call without secrets has a stand-in")
				}
				return
			}
			req, revoke := d.grantEgress(p)
			defer revoke()
			if e := req.HTTP.Egress; e == nil || !strings.HasPrefix(e.Addr, tt.addr) || e.Token == "" || strings.Contains(req.HTTP.Headers["X-Key"], testSecret) {
				t.Fatalf("executor's request %+v egress %+v, want the proxy at %s", req.HTTP, req.HTTP.Egress, tt.addr)
			}
		})
	}
}
