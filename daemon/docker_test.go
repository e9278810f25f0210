package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/ory/dockertest/v3"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/executors/image"
	"github.com/toolcage/toolcage/executors/image/imagetest"
)

// startDockerDaemon runs a daemon whose docker isolation uses the image
// built for this test binary, with the limits the limit tests break.
func startDockerDaemon(t *testing.T, mod func(*Config)) *testDaemon {
	t.Helper()
	tag, id := imagetest.Image(t, executorPath)
	return startDaemon(t, "", func(c *Config) {
		c.Docker.Image, c.Docker.ImageID = tag, id
		c.Sandbox.Memory = "128MiB"
		c.Sandbox.Pids = 64
		if mod != nil {
			mod(c)
		}
	})
}

// httpdContainer serves the executor image's /etc over HTTP from a
// container of its own (busybox httpd), so HTTP tools in both modes have
// a server to reach that is neither loopback nor outside this machine.
func httpdContainer(t *testing.T) string {
	t.Helper()
	pool, _ := imagetest.Engine(t)
	tag, _ := imagetest.Image(t, executorPath)
	repo, version, _ := strings.Cut(tag, ":")
	res, err := pool.RunWithOptions(&dockertest.RunOptions{
		Repository: repo, Tag: version,
		Entrypoint: []string{"/bin/busybox"}, Cmd: []string{"httpd", "-f", "-p", "8080", "-h", "/etc"},
		Labels: map[string]string{host.LabelOwner: host.OwnerLabel()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Purge(res) })
	ip := res.Container.NetworkSettings.IPAddress
	if ip == "" {
		t.Fatal("httpd container has no IP address on the default bridge")
	}
	addr := net.JoinHostPort(ip, "8080")
	if err := pool.Retry(func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ip
}

// TestDockerSameResultsAsProcess runs one table of JS, shell and HTTP
// tools twice, once per isolation, and wants the same answers.
func TestDockerSameResultsAsProcess(t *testing.T) {
	ip := httpdContainer(t)
	td := startDockerDaemon(t, func(c *Config) { c.HTTP.AllowPrivateHosts = []string{ip} })
	c := td.client
	type tc struct {
		name string
		def  string // without name and isolation
		args map[string]any
		// pick reduces a result to what both modes must agree on
		pick func(t *testing.T, r api.CallResponse) string
	}
	raw := func(_ *testing.T, r api.CallResponse) string {
		logs, _ := json.Marshal(r.Logs)
		return fmt.Sprintf("%s|%v|%s", r.Result, r.IsError, logs)
	}
	httpPick := func(t *testing.T, r api.CallResponse) string {
		var v struct {
			Status int
			Body   any
		}
		if err := json.Unmarshal(r.Result, &v); err != nil {
			t.Fatalf("http result %s: %v", r.Result, err)
		}
		return fmt.Sprintf("%d|%v|%v", v.Status, v.Body, r.IsError)
	}
	cases := []tc{
		{"js_add", `"kind":"js","js":{"code":"return args.a + args.b"}`, map[string]any{"a": 2, "b": 3}, raw},
		{"js_utils", `"kind":"js","js":{"code":"console.log('slug', utils.slugify(args.t)); return {s: utils.slugify(args.t), n: [3,1,2].sort()}"}`, map[string]any{"t": "Hello Docker World"}, raw},
		{"js_throw", `"kind":"js","js":{"code":"throw new Error('nope ' + args.x)"}`, map[string]any{"x": 1}, raw},
		{"shell_argv", `"kind":"shell","shell":{"command":"printf %s-%s {{.a}} {{.b}}"}`, map[string]any{"a": "x y", "b": "it's"}, raw},
		{"shell_pipe", `"kind":"shell","shell":{"command":"echo {{.w}} | tr a-z A-Z | wc -c"}`, map[string]any{"w": "hello"}, raw},
		{"shell_exit", `"kind":"shell","shell":{"command":"echo out; echo err >&2; exit 3"}`, nil, raw},
		{"shell_tmp", `"kind":"shell","shell":{"command":"echo kept > /tmp/f && cat /tmp/f && ls /tmp | grep -c f"}`, nil, raw},
		// utils.callTool: the nested call travels back over the Host
		// stream on the executor's own connection, the socket in the
		// container's bind-mounted dir; the callee runs in a container too.
		{"js_calltool", `"kind":"js","js":{"code":"const r = await utils.callTool('shout', {w: args.w}); return {got: r, n: 1 + await utils.callTool('js_add_docker', {a: 1, b: 2})}"}`, map[string]any{"w": "nested"}, raw},
		{"http_get", `"kind":"http","permissions":["network"],"http":{"method":"GET","url":"http://` + ip + `:8080/{{file}}","allowed_domains":["` + ip + `"]}`, map[string]any{"file": "group"}, httpPick},
	}
	create(t, c, `{"name":"shout","description":"called by js_calltool","isolation":"docker","kind":"shell","shell":{"command":"echo {{.w}} | tr a-z A-Z"}}`)
	for _, k := range cases {
		t.Run(k.name, func(t *testing.T) {
			got := map[string]string{}
			for _, iso := range []string{"process", "docker"} {
				name := k.name + "_" + iso
				create(t, c, `{"name":"`+name+`","description":"same in both","isolation":"`+iso+`",`+k.def+`}`)
				r, err := callTool(c, name, k.args)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got[iso] = k.pick(t, r)
			}
			if got["process"] != got["docker"] {
				t.Fatalf("process and docker disagree:\nprocess: %s\ndocker:  %s", got["process"], got["docker"])
			}
			if k.name == "http_get" && !strings.Contains(got["docker"], "toolcage:x:65532") {
				t.Fatalf("http tool did not reach the server: %s", got["docker"])
			}
			if k.name == "js_calltool" && !strings.Contains(got["docker"], `"stdout":"NESTED\n"`) {
				t.Fatalf("the nested call's answer is not in the result: %s", got["docker"])
			}
		})
	}
	// The nested calls of the docker caller are recorded under it.
	r, err := callTool(c, "js_calltool_docker", map[string]any{"w": "again"})
	if err != nil {
		t.Fatal(err)
	}
	var nested []string
	for _, e := range executionsOf(t, c, "parent="+r.CallID) {
		nested = append(nested, e.Tool+"/"+e.Outcome)
	}
	if slices.Sort(nested); strings.Join(nested, ",") != "js_add_docker/ok,shout/ok" {
		t.Fatalf("nested records of the docker caller: %v", nested)
	}
	// A file and a background process a call leaves are gone before the
	// next call of the same warm container.
	create(t, c, `{"name":"leave","description":"leaves things","isolation":"docker","kind":"shell","shell":{"command":"ls /tmp /work; ps -o comm | grep -c '^sleep$'; touch /tmp/left /work/left; (sleep 30 &); sleep 0.2"}}`)
	for i := range 3 {
		r, err := callTool(c, "leave", nil)
		if err != nil {
			t.Fatal(err)
		}
		if out := shellOut(t, r).Stdout; strings.Contains(out, "left") || !strings.HasSuffix(strings.TrimSpace(out), "0") {
			t.Fatalf("call %d saw what an earlier call left: %q", i, out)
		}
	}
}

// TestDockerLimits: a memory bomb, a process flood and a network attempt
// without the permission are stopped in the container, with the limit
// named; the daemon and the next call are fine.
func TestDockerLimits(t *testing.T) {
	ip := httpdContainer(t)
	td := startDockerDaemon(t, func(c *Config) {
		c.Shell.Rules.DisabledGroups = []string{"fork_bombs", "remote_code_execution", "reverse_shells", "data_exfiltration"}
	})
	c := td.client
	def := func(name, cmd string) {
		t.Helper()
		create(t, c, fmt.Sprintf(`{"name":%q,"description":"attack","kind":"shell","isolation":"docker","limits":{"timeout":"20s"},"shell":{"command":%q}}`, name, cmd))
	}
	def("memory_bomb", `awk 'BEGIN { s = "x"; while (1) s = s s }'; echo done`)
	def("fork_bomb", `b() { b | b & }; b; sleep 3; echo survived`)
	def("dial_out", `busybox wget -T 3 -q -O - http://`+ip+`:8080/group; echo rc=$?`)
	def("fine", `echo fine`)
	create(t, c, `{"name":"js_bomb","description":"eats memory","kind":"js","isolation":"docker","limits":{"memory":"16MiB"},"js":{"code":"let a=[]; while(true) a.push('x'.repeat(1<<20)+a.length)"}}`)
	create(t, c, `{"name":"js_fetch","description":"fetch without network","kind":"js","isolation":"docker","js":{"code":"return await fetch('http://`+ip+`:8080/group').then(r => r.status)"}}`)
	for _, k := range []struct {
		name  string
		code  errdefs.Code
		limit string
	}{
		{"memory_bomb", errdefs.LimitExceeded, errdefs.LimitMemory},
		{"fork_bomb", errdefs.LimitExceeded, errdefs.LimitPids},
		{"js_bomb", errdefs.LimitExceeded, errdefs.LimitMemory},
	} {
		t.Run(k.name, func(t *testing.T) {
			_, err := callTool(c, k.name, nil)
			if codeOf(err) != k.code || apiErr(t, err).Limit != k.limit {
				t.Fatalf("%s: %v, want %s (%s)", k.name, err, k.code, k.limit)
			}
			if r, err := callTool(c, "fine", nil); err != nil || shellOut(t, r).Stdout != "fine\n" {
				t.Fatalf("a call after %s: %v %s", k.name, err, r.Result)
			}
		})
	}
	t.Run("network", func(t *testing.T) {
		r, err := callTool(c, "dial_out", nil)
		if err != nil {
			t.Fatal(err)
		}
		if out := shellOut(t, r); strings.Contains(out.Stdout, "toolcage:x") || strings.Contains(out.Stdout, "rc=0") {
			t.Fatalf("a shell tool without network reached the server: %+v", out)
		}
		if r, err := callTool(c, "js_fetch", nil); err == nil && !r.IsError {
			t.Fatalf("fetch without the network permission worked: %s", r.Result)
		}
	})
}

// TestDockerKilledFromOutside: `docker kill` of the container mid-call is
// executor_failed, and the next call gets a fresh container.
func TestDockerKilledFromOutside(t *testing.T) {
	_, cli := imagetest.Engine(t)
	td := startDockerDaemon(t, nil)
	c := td.client
	create(t, c, `{"name":"slow","description":"sleeps","kind":"shell","isolation":"docker","shell":{"command":"sleep 20; echo woke"}}`)
	create(t, c, `{"name":"quick","description":"answers","kind":"shell","isolation":"docker","shell":{"command":"echo quick"}}`)
	if _, err := callTool(c, "quick", nil); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	start := time.Now()
	go func() { _, err := callTool(c, "slow", nil); errc <- err }()
	// The slow call's container is the one whose pid 1 has a sleep under it.
	label := host.LabelDaemon + "=" + td.d.docker.ID()
	killed := ""
	for killed == "" && time.Since(start) < 15*time.Second {
		time.Sleep(200 * time.Millisecond)
		res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{Filters: make(client.Filters).Add("label", label)})
		if err != nil {
			t.Fatal(err)
		}
		for _, ct := range res.Items {
			top, err := cli.ContainerTop(context.Background(), ct.ID, client.ContainerTopOptions{})
			if err != nil {
				continue
			}
			for _, p := range top.Processes {
				if strings.Contains(strings.Join(p, " "), "sleep 20") {
					if _, err := cli.ContainerKill(context.Background(), ct.ID, client.ContainerKillOptions{}); err != nil {
						t.Fatal(err)
					}
					killed = ct.ID
					break
				}
			}
		}
	}
	if killed == "" {
		t.Fatal("found no container running the slow call")
	}
	if err := <-errc; codeOf(err) != errdefs.ExecutorFailed {
		t.Fatalf("call whose container was killed: %v", err)
	}
	if time.Since(start) > 15*time.Second {
		t.Fatalf("the killed call took %v", time.Since(start))
	}
	if r, err := callTool(c, "quick", nil); err != nil || shellOut(t, r).Stdout != "quick\n" {
		t.Fatalf("next call: %v %s", err, r.Result)
	}
	// Stopping the daemon removes every container it made.
	td.stop()
	res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil || len(res.Items) != 0 {
		t.Fatalf("containers left after the daemon stopped: %v %d", err, len(res.Items))
	}
}

// TestDockerHostOverTCP reaches the engine the way a remote one is
// reached, DOCKER_HOST=tcp://…, through a loopback proxy to the local
// socket, and runs a call in a container through it.
func TestDockerHostOverTCP(t *testing.T) {
	imagetest.Engine(t)
	tag, id := imagetest.Image(t, executorPath)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer in.Close()
				out, err := net.Dial("unix", "/var/run/docker.sock")
				if err != nil {
					return
				}
				defer out.Close()
				go func() { io.Copy(out, in); out.(*net.UnixConn).CloseWrite() }()
				io.Copy(in, out)
			}()
		}
	}()
	t.Setenv("DOCKER_HOST", "tcp://"+ln.Addr().String())
	td := startDaemon(t, "", func(c *Config) {
		c.Docker.Image, c.Docker.ImageID = tag, id
		c.Isolation = "docker" // the default: the tool names none
	})
	if !strings.HasPrefix(td.d.docker.Client.DaemonHost(), "tcp://127.0.0.1:") {
		t.Fatalf("engine host %s", td.d.docker.Client.DaemonHost())
	}
	create(t, td.client, `{"name":"hello","description":"hi","kind":"js","js":{"code":"return 'hi ' + args.n"}}`)
	r, err := callTool(td.client, "hello", map[string]any{"n": "tcp"})
	if err != nil || string(r.Result) != `"hi tcp"` {
		t.Fatalf("call over DOCKER_HOST=tcp: %v %s", err, r.Result)
	}
	if td.d.docker.Starts() == 0 || conns.Load() == 0 {
		t.Fatalf("no container was started through the proxy (starts %d, proxied connections %d)", td.d.docker.Starts(), conns.Load())
	}
}

// TestDockerImageCheck: a daemon whose default is docker refuses to start
// without the image, or with another image pinned, and says how to fix it.
func TestDockerImageCheck(t *testing.T) {
	imagetest.Engine(t)
	tag, id := imagetest.Image(t, executorPath)
	for _, k := range []struct {
		name, tag, id, want string
	}{
		{"missing", image.Repository + ":no-such-version", "", "toolcage image build"},
		{"mismatch", tag, "sha256:" + strings.Repeat("0", 64), "pins docker.image_id"},
	} {
		t.Run(k.name, func(t *testing.T) {
			cfg, err := LoadConfig("", map[string]any{"socket": t.TempDir() + "/s.sock", "data_dir": t.TempDir(), "executor.path": executorPath,
				"isolation": "docker", "docker.image": k.tag, "docker.image_id": k.id})
			if err != nil {
				t.Fatal(err)
			}
			d, err := New(context.Background(), cfg, nil)
			if err == nil {
				d.Close()
				t.Fatal("started without the right image")
			}
			if !strings.Contains(err.Error(), k.want) {
				t.Fatalf("error %q does not say %q", err, k.want)
			}
		})
	}
	_ = id
}

func TestDockerConfigKeys(t *testing.T) {
	for _, k := range []struct {
		key  string
		val  any
		want string
	}{
		{"isolation", "vm", `isolation: unknown isolation "vm"`},
		{"docker.image_id", "abc", "docker.image_id: want the ID"},
		{"docker.image_id", "sha256:" + strings.Repeat("G", 64), "docker.image_id: want the ID"},
	} {
		_, err := LoadConfig("", map[string]any{k.key: k.val})
		if err == nil || !strings.Contains(err.Error(), k.want) {
			t.Errorf("%s=%v: %v, want %q", k.key, k.val, err, k.want)
		}
	}
	cfg, err := LoadConfig("", map[string]any{"isolation": "docker", "docker.image_id": strings.Repeat("a", 64)})
	if err != nil || cfg.Isolation != "docker" || cfg.DockerImage() != image.Tag(Version) {
		t.Fatalf("%v %+v", err, cfg.Docker)
	}
}

// TestDockerOrphansRemoved: a daemon starting with docker removes the
// executor containers of a dead daemon of this host, and leaves alone
// those of a live one and of another host's.
func TestDockerOrphansRemoved(t *testing.T) {
	_, cli := imagetest.Engine(t)
	_, id := imagetest.Image(t, executorPath)
	hostname, _ := os.Hostname()
	mk := func(owner string) string {
		t.Helper()
		res, err := cli.ContainerCreate(context.Background(), client.ContainerCreateOptions{Config: &container.Config{
			Image: id, Labels: map[string]string{host.LabelOwner: owner, host.LabelDaemon: "test"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true}) })
		return res.ID
	}
	// pid 2^22+1 is above pid_max's ceiling: never a live process.
	dead := mk(hostname + "/4194305/1")
	live := mk(host.OwnerLabel())
	other := mk("another-host/1/1")
	startDockerDaemon(t, nil)
	exists := func(id string) bool {
		_, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
		return err == nil
	}
	if exists(dead) || !exists(live) || !exists(other) {
		t.Fatalf("after start: dead daemon's %v (want gone), live one's %v, other host's %v (want kept)", exists(dead), exists(live), exists(other))
	}
}

// worldReadable opens dir (recursively) to every uid for reading: the
// container runs as the image's user, the process sandbox as nobody (root
// daemon) or the daemon's uid, and a read-only workspace is theirs to read.
func worldReadable(t *testing.T, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDockerWorkspace: a worker's workspace is bound into the container at
// /workspace the way the process sandbox binds it. The filesystem toolset
// (the fs executor in the image) and shell tools holding filesystem give
// the same answers under isolation: docker (the config default) as under
// process; the read-only bind refuses a write from inside the container;
// a tool without filesystem sees no /workspace.
func TestDockerWorkspace(t *testing.T) {
	dir := sandboxDir(t)
	ws := filepath.Join(dir, "ws")
	writeFile(t, filepath.Join(ws, "README.md"), "hello from the workspace\nsecond line\n")
	writeFile(t, filepath.Join(ws, "src", "main.go"), "package main\n")
	worldReadable(t, ws)
	wdir := filepath.Join(dir, "agent")
	writeFile(t, filepath.Join(wdir, "tools", "ls_ws.yaml"), "name: ls_ws\ndescription: lists the workspace\nkind: shell\npermissions: [filesystem]\nshell: {command: \"ls -1 /workspace /workspace/src\"}\n")
	writeFile(t, filepath.Join(wdir, "tools", "touch_ws.yaml"), "name: touch_ws\ndescription: writes the workspace\nkind: shell\npermissions: [filesystem]\nshell: {command: \"touch /workspace/new-file\"}\n")
	writeFile(t, filepath.Join(wdir, "tools", "no_fs.yaml"), "name: no_fs\ndescription: looks for the workspace without the permission\nkind: shell\nshell: {command: \"ls /workspace\"}\n")
	path := filepath.Join(wdir, "w.yaml")
	writeFile(t, path, "name: ws_agent\nworkspace: ../ws\ntool_files: [tools/*.yaml]\ntoolsets: {filesystem: {}}\napproval: {tools: {write_file: preApproved}}\n")

	proc := startDaemon(t, "", nil)
	dock := startDockerDaemon(t, func(c *Config) { c.Isolation = "docker" })
	agents := map[string]*api.Client{}
	for iso, td := range map[string]*testDaemon{"process": proc, "docker": dock} {
		added, err := addWorker(td.client, path)
		if err != nil {
			t.Fatalf("%s: %v", iso, err)
		}
		agents[iso] = noWait(withToken(td.client, added.Token))
	}
	type call struct {
		tool string
		args map[string]any
		// pick reduces a call's answer to what both modes must agree on
		pick func(t *testing.T, r api.CallResponse, err error) string
	}
	result := func(t *testing.T, r api.CallResponse, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s|%v", r.Result, r.IsError)
	}
	refused := func(t *testing.T, _ api.CallResponse, err error) string {
		return fmt.Sprintf("%s|%v", codeOf(err), err != nil && strings.Contains(err.Error(), "read-only"))
	}
	exit := func(want string) func(t *testing.T, r api.CallResponse, err error) string {
		return func(t *testing.T, r api.CallResponse, err error) string {
			if err != nil {
				t.Fatal(err)
			}
			out := shellOut(t, r)
			if out.ExitCode == 0 || !strings.Contains(out.Stderr, want) {
				t.Fatalf("want a failure saying %q: %+v", want, out)
			}
			return "failed: " + want
		}
	}
	stdout := func(t *testing.T, r api.CallResponse, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		out := shellOut(t, r)
		return fmt.Sprintf("%d|%s", out.ExitCode, out.Stdout)
	}
	for _, k := range []call{
		{"read_file", map[string]any{"path": "README.md"}, result},
		{"read_file", map[string]any{"path": "README.md", "start_line": 2, "end_line": 2}, result},
		{"list_files", map[string]any{"path": "."}, result},
		{"list_files", map[string]any{"path": "src"}, result},
		{"write_file", map[string]any{"path": "x.txt", "content": "x"}, refused},
		{"ls_ws", nil, stdout},
		{"touch_ws", nil, exit("Read-only file system")},
		{"no_fs", nil, exit("No such file")},
	} {
		t.Run(k.tool, func(t *testing.T) {
			got := map[string]string{}
			for _, iso := range []string{"process", "docker"} {
				r, err := callTool(agents[iso], k.tool, k.args)
				got[iso] = k.pick(t, r, err)
			}
			if got["process"] != got["docker"] {
				t.Fatalf("%s %v: process and docker disagree:\nprocess: %s\ndocker:  %s", k.tool, k.args, got["process"], got["docker"])
			}
			t.Logf("%s %v: %s", k.tool, k.args, got["docker"])
		})
	}
	if _, err := os.Stat(filepath.Join(ws, "new-file")); err == nil {
		t.Fatal("a read-only workspace was written from a container")
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); err == nil {
		t.Fatal("a read-only workspace was written by write_file")
	}
	// A writable workspace: the fs executor and a shell tool write it from
	// the container as from the sandbox, and the files have the same owner
	// (the sandbox's ids, which the container runs as when it has mounts).
	rw := filepath.Join(dir, "rw")
	writeFile(t, filepath.Join(rw, "keep.txt"), "kept\n")
	worldReadable(t, rw)
	sandboxOwn(t, rw)
	rwPath := filepath.Join(wdir, "rw.yaml")
	writeFile(t, rwPath, "name: rw_agent\nworkspace: ../rw\nreadonly: false\ntool_files: [tools/touch_ws.yaml]\ntoolsets: {filesystem: {}}\napproval: {tools: {write_file: preApproved}}\n")
	owners := map[string]string{}
	for iso, td := range map[string]*testDaemon{"process": proc, "docker": dock} {
		added, err := addWorker(td.client, rwPath)
		if err != nil {
			t.Fatalf("%s: %v", iso, err)
		}
		rwAgent := noWait(withToken(td.client, added.Token))
		r, err := callTool(rwAgent, "write_file", map[string]any{"path": "by-" + iso + "/f.txt", "content": iso})
		if err != nil || r.IsError {
			t.Fatalf("%s write_file in a writable workspace: %v %s", iso, err, r.Result)
		}
		if r, err := callTool(rwAgent, "touch_ws", nil); err != nil || shellOut(t, r).ExitCode != 0 {
			t.Fatalf("%s touch in a writable workspace: %v %s", iso, err, r.Result)
		}
		for _, f := range []string{"by-" + iso + "/f.txt", "new-file"} {
			fi, err := os.Stat(filepath.Join(rw, f))
			if err != nil {
				t.Fatalf("%s: %v", iso, err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			owners[iso+" "+f] = fmt.Sprintf("%d:%d", st.Uid, st.Gid)
		}
		if err := os.Remove(filepath.Join(rw, "new-file")); err != nil {
			t.Fatal(err)
		}
	}
	if owners["process by-process/f.txt"] != owners["docker by-docker/f.txt"] || owners["process new-file"] != owners["docker new-file"] {
		t.Fatalf("files written in the workspace have other owners per isolation: %v", owners)
	}

	// The containers of the calls: the fs executor's and the shell tools'
	// with filesystem bind the workspace read-only at /workspace; the shell
	// tool's without it binds nothing but the socket dir.
	_, cli := imagetest.Engine(t)
	res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{Filters: make(client.Filters).Add("label", host.LabelDaemon+"="+dock.d.docker.ID())})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, ct := range res.Items {
		kind := ct.Labels[host.LabelKind]
		in, err := cli.ContainerInspect(context.Background(), ct.ID, client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var wsMounts []string
		for _, m := range in.Container.Mounts {
			if m.Destination == "/workspace" {
				wsMounts = append(wsMounts, fmt.Sprintf("%s rw=%v", mountSource(t, in.Container.Config.Labels, m.Destination), m.RW))
			}
		}
		switch {
		case len(wsMounts) == 1 && wsMounts[0] == rw+" rw=true":
			seen[kind+" writable"]++
		case len(wsMounts) == 0:
			seen[kind+" without"]++
		case len(wsMounts) == 1 && wsMounts[0] == ws+" rw=false":
			seen[kind+" read-only"]++
		default:
			t.Fatalf("%s container %.12s binds /workspace as %v, want %s read-only", kind, ct.ID, wsMounts, ws)
		}
	}
	for _, want := range []string{"fs read-only", "shell read-only", "shell without", "fs writable", "shell writable"} {
		if seen[want] == 0 {
			t.Errorf("no %s container with the workspace %s (saw %v)", strings.Fields(want)[0], strings.Fields(want)[1], seen)
		}
	}
}

// workspaceContainers lists, for each container of daemon td, the host
// sources bound at /workspace.
func workspaceContainers(t *testing.T, td *testDaemon) []string {
	t.Helper()
	_, cli := imagetest.Engine(t)
	res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", host.LabelDaemon+"="+td.d.docker.ID())})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ct := range res.Items {
		in, err := cli.ContainerInspect(context.Background(), ct.ID, client.ContainerInspectOptions{})
		if err != nil {
			continue // removed meanwhile
		}
		for _, m := range in.Container.Mounts {
			if m.Destination == "/workspace" {
				out = append(out, mountSource(t, in.Container.Config.Labels, m.Destination))
			}
		}
	}
	return out
}

// mountSource is the host path a container binds at target, from its
// label (the engine's Mounts show the runner's private mountpoint the
// source was handed over as).
func mountSource(t *testing.T, labels map[string]string, target string) string {
	t.Helper()
	var ms []host.Mount
	if err := json.Unmarshal([]byte(labels[host.LabelMounts]), &ms); err != nil {
		t.Fatalf("label %s: %v", host.LabelMounts, err)
	}
	for _, m := range ms {
		if m.Target == target {
			return m.Source
		}
	}
	t.Fatalf("label %s names no mount at %s: %s", host.LabelMounts, target, labels[host.LabelMounts])
	return ""
}

// TestDockerMountSourceBecameSymlink: the engine resolves bind sources
// itself, so the container runner checks each source again right before
// the container is created and started and refuses one that has become a
// symlink. Through the daemon: a workspace swapped for a symlink to
// another directory after the worker was registered fails the first call
// with a clear error, and no container binds anything at /workspace. At
// the runner (the pool, past the daemon's own check): a key whose source
// has a symlink in its path is refused with policy_denied and no
// container is made.
func TestDockerMountSourceBecameSymlink(t *testing.T) {
	dir := sandboxDir(t)
	ws := filepath.Join(dir, "ws")
	other := filepath.Join(dir, "other")
	writeFile(t, filepath.Join(ws, "mine.txt"), "the workspace\n")
	writeFile(t, filepath.Join(other, "theirs.txt"), "not the workspace\n")
	worldReadable(t, dir)
	wdir := filepath.Join(dir, "agent")
	writeFile(t, filepath.Join(wdir, "tools", "ls_ws.yaml"), "name: ls_ws\ndescription: lists the workspace\nkind: shell\npermissions: [filesystem]\nshell: {command: \"ls /workspace\"}\n")
	path := filepath.Join(wdir, "w.yaml")
	writeFile(t, path, "name: swap_agent\nworkspace: ../ws\ntool_files: [tools/*.yaml]\ntoolsets: {filesystem: {}}\n")
	td := startDockerDaemon(t, func(c *Config) { c.Isolation = "docker" })
	added, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := noWait(withToken(td.client, added.Token))

	// The swap: the workspace's directory moves away, a symlink to
	// another directory takes its name.
	if err := os.Rename(ws, ws+".orig"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, ws); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		tool string
		args map[string]any
	}{{"ls_ws", nil}, {"read_file", map[string]any{"path": "theirs.txt"}}} {
		r, err := callTool(agent, k.tool, k.args)
		if codeOf(err) != errdefs.PolicyDenied || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("%s on a workspace swapped for a symlink: %v %s, want policy_denied naming the symlink", k.tool, err, r.Result)
		}
	}
	if got := workspaceContainers(t, td); len(got) != 0 {
		t.Fatalf("containers bind /workspace from %v after the refused calls", got)
	}
	// Swapped back, the same call works: the refusal was the symlink's.
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(ws+".orig", ws); err != nil {
		t.Fatal(err)
	}
	r, err := callTool(agent, "ls_ws", nil)
	if err != nil || shellOut(t, r).Stdout != "mine.txt\n" {
		t.Fatalf("after the swap back: %v %s", err, r.Result)
	}

	// The runner's own check, past the daemon's: a source whose parent is
	// now a symlink (to a directory holding a "ws" of its own).
	if err := os.Rename(dir+"/other", dir+"/decoy"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "decoy", "ws", "decoy.txt"), "decoy\n")
	worldReadable(t, filepath.Join(dir, "decoy"))
	linked := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "decoy"), linked); err != nil {
		t.Fatal(err)
	}
	starts := td.d.docker.Starts()
	req := func(id string) *executors.Request {
		return &executors.Request{CallID: id, Tool: "ls_ws", Kind: executors.KindShell, Args: json.RawMessage(`{}`),
			Permissions: []string{"filesystem"}, Limits: executors.Limits{Timeout: 10 * time.Second},
			Shell: &executors.ShellCall{Argv: []string{"ls", "/workspace"}}}
	}
	key := host.NewKey(executors.KindShell, "docker", []string{"filesystem"})
	_, err = td.d.pool.Execute(context.Background(), key.WithMounts([]host.Mount{{Source: filepath.Join(linked, "ws"), Target: "/workspace"}}), req("c1"))
	if errdefs.CodeOf(err) != errdefs.PolicyDenied || !strings.Contains(err.Error(), "symlink") || !strings.Contains(err.Error(), "nothing was mounted") {
		t.Fatalf("a source with a symlink in its path: %v, want policy_denied", err)
	}
	if n := td.d.docker.Starts(); n != starts {
		t.Fatalf("%d containers were started for a refused source", n-starts)
	}
	if got := workspaceContainers(t, td); len(got) != 1 || got[0] != ws {
		t.Fatalf("containers bind /workspace from %v, want only %s", got, ws)
	}
	// The same key on the real directory runs.
	res, err := td.d.pool.Execute(context.Background(), key.WithMounts([]host.Mount{{Source: ws, Target: "/workspace"}}), req("c2"))
	if err != nil || !strings.Contains(string(res.Value), "mine.txt") {
		t.Fatalf("the real source: %v %+v", err, res)
	}
}
