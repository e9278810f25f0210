package daemon

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolcage/toolcage/daemon/api"
)

// The review page in a real headless browser: Debian's chromium, driven
// over the DevTools protocol with chromedp. It skips only when chromium is
// missing or cannot start here, and under CI=true it fails instead.

var updateScreenshots = flag.Bool("update-screenshots", false, "write the review page's screenshots to docs/screenshots/")

// skipOrFail skips, or under CI=true fails: CI installs chromium (make
// deps), so there a missing browser is a broken build, not a skip.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// headless starts chromium and returns a tab's context.
func headless(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		skipOrFail(t, "no chromium on PATH (scripts/deps.sh installs Debian's chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		// Docker's /dev/shm is 64 MiB, too small for the renderer.
		chromedp.Flag("disable-dev-shm-usage", true),
		// No name resolves but the loopback address the page is on: the
		// browser sends nothing anywhere else.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"),
		chromedp.Flag("no-proxy-server", true),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its own sandbox on (it
		// wants an unprivileged user for its setuid/namespace sandbox).
		// This browser only ever loads our loopback page.
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Do starts the browser, bound to the context it gets: it
	// is the tab's own, not one with a deadline (that would end the
	// browser with it).
	if err := chromedp.Do(ctx); err != nil {
		skipOrFail(t, "chromium (%s) cannot run here: %v", path, err)
	}
	return ctx
}

// step runs browser actions with a deadline.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func run[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// screenshot saves the whole page as name.png: in docs/screenshots with
// -update-screenshots, else in a temp dir (it must still decode).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	b := run(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil || img.Bounds().Dx() < 800 || img.Bounds().Dy() < 300 {
		t.Fatalf("screenshot %s: %v (%v)", name, err, img)
	}
	dir := t.TempDir()
	if *updateScreenshots {
		dir = filepath.Join("..", "docs", "screenshots")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUIBrowser: log in through the link, see a parked call appear (the
// page's own polling), allow it with a click, see the call finish in the
// audit log; refused without the login; an action without the CSRF token
// refused. Each screen is photographed on the way.
func TestUIBrowser(t *testing.T) {
	ctx := headless(t)
	td := startDaemon(t, "", withUI)
	c := td.client
	bg := context.Background()
	base := "http://" + td.d.UIAddr()

	// Something to review: two tools that ask, a parked call of one, a
	// tool an agent made and then changed, a worker.
	create(t, c, "name: ask_js\ndescription: doubles n, with a person's say-so\nkind: js\napproval: ask\njs: {code: 'return args.n * 2'}")
	create(t, c, `name: archive_logs
description: count the bytes of a log directory, compressed
kind: shell
approval: ask
parameters: {type: object, properties: {dir: {type: string}}, required: [dir]}
shell:
  command: "tar czf - {{.dir}} 2>/dev/null | wc -c"
  env: {LC_ALL: C, GZIP: "-9"}
`)
	create(t, c, jsTool)
	agent := llm(c)
	if err := agent.Do(bg, "POST", "/v1/tools", []byte("name: disk_usage\ndescription: disk usage of a directory\nkind: shell\nparameters: {type: object, properties: {path: {type: string}}, required: [path]}\nshell: {command: 'du -sh {{.path}}'}"), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(bg, "POST", "/v1/tools/disk_usage/approve", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := agent.Do(bg, "PATCH", "/v1/tools/disk_usage", []byte(`{"shell":{"command":"du -sh --apparent-size {{.path}}"},"limits":{"timeout":"5s"}}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := agent.Do(bg, "POST", "/v1/tools", []byte("name: tail_log\ndescription: last lines of a log\nkind: shell\nparameters: {type: object, properties: {file: {type: string}}, required: [file]}\nshell: {command: 'tail -n 20 {{.file}}'}"), nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ops.yaml"), "name: ops\ndescription: Tools for the on-call agent\ntools: [adder, archive_logs, disk_usage]\napproval:\n  default: ask\n  tools: {adder: preApproved}\n")
	if _, err := addWorker(c, filepath.Join(dir, "ops.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := callTool(c, "adder", map[string]any{"a": 2, "b": 3}); err != nil {
		t.Fatal(err)
	}
	if err := noWait(c).Do(bg, "POST", "/v1/tools/archive_logs/call", api.CallRequest{Arguments: mustJSON(map[string]any{"dir": "/var/log/app; rm -rf ~"})}, nil); err == nil {
		t.Fatal("a call of an approval: ask tool ran without approval")
	}

	// Refused without the login.
	step(t, ctx, "open the page unlogged", chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(chromedp.CSS("#login")))
	if txt := run(t, ctx, "login text", chromedp.Text(chromedp.CSS("#login"))); !strings.Contains(txt, "toolcage ui open") {
		t.Fatalf("login page says %q", txt)
	}
	if n := run(t, ctx, "count approvals", chromedp.Evaluate[int](`document.querySelectorAll("section.approval").length`)); n != 0 {
		t.Fatalf("the unlogged page shows %d approvals", n)
	}
	screenshot(t, ctx, "login")

	// Log in through the link: it lands on the approvals, and the
	// session cookie is out of the page's JavaScript's reach.
	step(t, ctx, "log in", chromedp.Navigate(uiLink(t, c)), chromedp.WaitVisible(chromedp.CSS("#live")))
	if loc := run(t, ctx, "location", chromedp.Location()); loc != base+"/approvals" {
		t.Fatalf("after login at %s", loc)
	}
	if ck := run(t, ctx, "document.cookie", chromedp.Evaluate[string](`document.cookie`)); ck != "" {
		t.Fatalf("the session cookie is readable from JavaScript: %q", ck)
	}

	// A call parks and waits; the open page shows it without a reload.
	done := make(chan api.CallResponse, 1)
	go func() {
		r, err := callTool(c, "ask_js", map[string]any{"n": 21})
		if err != nil {
			t.Errorf("the waiting call: %v", err)
		}
		done <- r
	}()
	list := waitPending(t, c, 2)
	if list.Approvals[1].Tool != "ask_js" {
		t.Fatalf("pending: %+v", list)
	}
	id, parked := list.Approvals[1].ID, list.Approvals[0].ID
	step(t, ctx, "see the parked call appear", chromedp.WaitVisible(chromedp.CSS("#approval-"+id)))
	if txt := run(t, ctx, "archive approval", chromedp.Text(chromedp.CSS("#approval-"+parked))); !strings.Contains(txt, "tar czf - '/var/log/app; rm -rf ~' 2>/dev/null | wc -c") ||
		!strings.Contains(txt, "GZIP=-9") {
		t.Errorf("the shell approval does not show what would run:\n%s", txt)
	}
	screenshot(t, ctx, "approvals")

	// An action without the CSRF token is refused (403), from the page itself.
	status := run(t, ctx, "POST without CSRF", chromedp.Evaluate[int](
		`fetch("/approvals/`+parked+`/deny", {method: "POST", body: new URLSearchParams({})}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	if status != 403 {
		t.Errorf("a POST without the CSRF token got %d, want 403", status)
	}
	if err := c.Do(bg, "GET", "/v1/approvals?status=pending", nil, &list); err != nil || len(list.Approvals) != 2 {
		t.Fatalf("after the refused POST: %+v %v", list, err)
	}

	// Allow with a click; the waiting caller gets its result.
	step(t, ctx, "click allow", chromedp.Click(chromedp.CSS("#approval-"+id+" button.allow")), chromedp.WaitVisible(chromedp.CSS("#flash")))
	if txt := run(t, ctx, "flash", chromedp.Text(chromedp.CSS("#flash"))); !strings.Contains(txt, "Allowed "+id) {
		t.Errorf("flash %q", txt)
	}
	select {
	case r := <-done:
		if string(r.Result) != "42" {
			t.Fatalf("allowed call: %+v", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the allowed call did not finish")
	}

	// The audit log shows the call done.
	step(t, ctx, "audit", chromedp.Navigate(base+"/audit"),
		chromedp.WaitVisible(chromedp.CSS(`tr.exec[data-tool="ask_js"][data-outcome="ok"]`)))
	screenshot(t, ctx, "audit")
	step(t, ctx, "audit filtered", chromedp.Navigate(base+"/audit?outcome=refused"),
		chromedp.WaitVisible(chromedp.CSS(`tr.exec[data-tool="archive_logs"]`)))
	if n := run(t, ctx, "rows", chromedp.Evaluate[int](`document.querySelectorAll('tr.exec:not([data-outcome="refused"])').length`)); n != 0 {
		t.Errorf("outcome=refused shows %d other rows", n)
	}

	step(t, ctx, "tools", chromedp.Navigate(base+"/tools"), chromedp.WaitVisible(chromedp.CSS("#tool-disk_usage .diff")))
	screenshot(t, ctx, "tools")
	step(t, ctx, "workers", chromedp.Navigate(base+"/workers"), chromedp.WaitVisible(chromedp.CSS("#worker-ops")))
	screenshot(t, ctx, "workers")
}
