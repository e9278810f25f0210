package bench

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/engine"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/executors/image"
	"github.com/toolcage/toolcage/executors/image/imagetest"
)

// Docker isolation measured in one run: warm container calls against the
// process sandbox's, a container's cold start against `docker run --rm` of
// the same image, and the image build.

func TestMain(m *testing.M) {
	code := m.Run()
	if err := imagetest.Cleanup(host.LabelOwner + "=" + host.OwnerLabel()); err != nil && code == 0 {
		code = 1
	}
	os.Exit(code)
}

// dockerImage builds (once) the executor image from the benchmark's
// executor; it skips without an engine.
func dockerImage(b *testing.B) (string, string) {
	return imagetest.Image(b, filepath.Join(binDir(b), "toolcage-executor"))
}

// BenchmarkDockerCall: the trivial JS tool of BenchmarkJSCallLatency with
// isolation: docker and with isolation: process on one daemon, interleaved,
// both warm. Reports both medians and their ratio (target: within 2x).
func BenchmarkDockerCall(b *testing.B) {
	tag, id := dockerImage(b)
	d := startDaemonEnv(b, "TOOLCAGE_DOCKER_IMAGE="+tag, "TOOLCAGE_DOCKER_IMAGE_ID="+id)
	createTool(b, d.client, trivialTool)
	var def map[string]any
	json.Unmarshal([]byte(trivialTool), &def)
	def["name"], def["isolation"] = "add_docker", "docker"
	raw, _ := json.Marshal(def)
	createTool(b, d.client, string(raw))
	callDocker := func() {
		var r api.CallResponse
		if err := d.client.Do(context.Background(), "POST", "/v1/tools/add_docker/call", addArgs, &r); err != nil || string(r.Result) != "3" {
			b.Fatalf("docker call: %v %s", err, r.Result)
		}
	}
	for range 50 {
		callAdd(b, d.client)
		callDocker()
	}
	var dLat, pLat []time.Duration
	i := 0
	for b.Loop() {
		dc := func() { dLat = append(dLat, timed(callDocker)) }
		pc := func() { pLat = append(pLat, timed(func() { callAdd(b, d.client) })) }
		if i%2 == 0 {
			dc()
			pc()
		} else {
			pc()
			dc()
		}
		i++
	}
	dm, pm := median(dLat), median(pLat)
	b.ReportMetric(us(dm), "p50-µs")
	b.ReportMetric(us(pm), "process-p50-µs")
	b.ReportMetric(float64(dm)/float64(pm), "x-process")
}

// BenchmarkDockerHTTPEgress: an HTTP tool with a secret GETting a local
// server through the egress proxy, with isolation: docker (the proxy over
// the socket bound into a container without network) and with isolation:
// process (over 127.0.0.1), on one daemon, interleaved, both warm.
// Reports both medians and their ratio.
func BenchmarkDockerHTTPEgress(b *testing.B) {
	tag, id := dockerImage(b)
	url := localAPI(b)
	d := startDaemonEnv(b, "TOOLCAGE_DOCKER_IMAGE="+tag, "TOOLCAGE_DOCKER_IMAGE_ID="+id, "TOOLCAGE_HTTP_ALLOW_PRIVATE_HOSTS=localhost")
	createKeyTool(b, d, "key_docker", "docker", url)
	createKeyTool(b, d, "key_process", "process", url)
	call := func(name string) func() {
		return func() {
			if r := callTool(b, d.client, name, noArgs); !strings.Contains(string(r.Result), `"ok":true`) {
				b.Fatalf("%s returned %s", name, r.Result)
			}
		}
	}
	dc, pc := call("key_docker"), call("key_process")
	for range 50 {
		dc()
		pc()
	}
	var dLat, pLat []time.Duration
	i := 0
	for b.Loop() {
		steps := []func(){
			func() { dLat = append(dLat, timed(dc)) },
			func() { pLat = append(pLat, timed(pc)) },
		}
		for j := range steps { // alternate, so neither is always first
			steps[(i+j)%len(steps)]()
		}
		i++
	}
	dm, pm := median(dLat), median(pLat)
	b.ReportMetric(us(dm), "p50-µs")
	b.ReportMetric(us(pm), "process-p50-µs")
	b.ReportMetric(float64(dm)/float64(pm), "x-process")
}

// BenchmarkDockerColdStart: start one executor container and complete the
// go-plugin handshake (create, attach, start, handshake; removal is not
// counted), interleaved with the anchor: `docker run --rm` of the same
// image running /bin/true.
func BenchmarkDockerColdStart(b *testing.B) {
	_, id := dockerImage(b)
	cli, err := engine.Connect(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	state, err := os.MkdirTemp("", "tcb-docker")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(state)
	r := &host.DockerRunner{Client: cli, Image: id, StateDir: state,
		Limits: host.ContainerLimits{MemoryBytes: 256 << 20, Pids: 64, CPUs: 1}}
	p := host.NewPool(host.PoolConfig{Runners: map[string]host.Runner{"docker": r}})
	defer func() {
		p.Close()
		r.Close(context.Background())
	}()
	key := host.NewKey(executors.KindJS, "docker", nil)
	docker, _ := exec.LookPath("docker")
	var cLat, aLat []time.Duration
	for b.Loop() {
		t := time.Now()
		if err := p.StartOne(context.Background(), key); err != nil {
			b.Fatal(err)
		}
		cLat = append(cLat, time.Since(t))
		if docker != "" {
			t = time.Now()
			if out, err := exec.Command(docker, "run", "--rm", "--network", "none", "--entrypoint", "/bin/true", id).CombinedOutput(); err != nil {
				b.Fatalf("docker run: %v %s", err, out)
			}
			aLat = append(aLat, time.Since(t))
		}
	}
	b.ReportMetric(ms(median(cLat)), "p50-ms")
	if len(aLat) > 0 {
		b.ReportMetric(ms(median(aLat)), "docker-run-p50-ms")
	}
}

// BenchmarkDockerImageBuild: `toolcage image build` through the Engine API,
// from the build context to the tagged image.
func BenchmarkDockerImageBuild(b *testing.B) {
	dockerImage(b) // the engine is there; the shared image is built
	cli, err := engine.Connect(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	tag := image.Repository + ":bench-" + time.Now().Format("150405.000")
	src := image.Sources{Executor: filepath.Join(binDir(b), "toolcage-executor")}
	var lat []time.Duration
	var ids []string
	for b.Loop() {
		t := time.Now()
		id, err := image.Build(context.Background(), cli, src, tag, nil)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		ids = append(ids, id)
	}
	for _, id := range ids {
		imagetest.RemoveImage(cli, id)
	}
	b.ReportMetric(median(lat).Seconds(), "s")
}
