package image

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

func TestTag(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "toolcage-executor:dev",
		"v1.2.3":                 "toolcage-executor:v1.2.3",
		"2c536e0-dirty":          "toolcage-executor:2c536e0-dirty",
		"v1+meta/x":              "toolcage-executor:v1-meta-x",
		strings.Repeat("a", 200): "toolcage-executor:" + strings.Repeat("a", 128),
	} {
		if got := Tag(in); got != want {
			t.Errorf("Tag(%q) = %q, want %q", in, got, want)
		}
	}
}

// staticBinary is the static busybox scripts/deps.sh installs.
func staticBinary(t *testing.T) string {
	t.Helper()
	if _, err := readStatic(DefaultBusybox, "busybox"); err != nil {
		t.Fatalf("need a static busybox at %s (apt-get install busybox-static): %v", DefaultBusybox, err)
	}
	return DefaultBusybox
}

func TestContext(t *testing.T) {
	bb := staticBinary(t)
	data, err := ContextBytes(Sources{Executor: bb, Busybox: bb})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*tar.Header{}
	bodies := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h
		b, _ := io.ReadAll(tr)
		bodies[h.Name] = string(b)
	}
	for _, want := range []string{"Dockerfile", "rootfs/bin/busybox", "rootfs" + ExecutorPath, "rootfs/etc/passwd", "rootfs/etc/group", "rootfs/tmp/", "rootfs/work/", "rootfs/bin/sh"} {
		if files[want] == nil {
			t.Errorf("context lacks %s", want)
		}
	}
	if h := files["rootfs/bin/sh"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "busybox" {
		t.Errorf("/bin/sh is not a link to busybox: %+v", h)
	}
	if !strings.Contains(bodies["rootfs/etc/passwd"], "toolcage:x:65532:65532:") || !strings.Contains(bodies["Dockerfile"], "USER 65532:65532") {
		t.Errorf("no non-root user: %q %q", bodies["rootfs/etc/passwd"], bodies["Dockerfile"])
	}
	if h := files["rootfs"+ExecutorPath]; h.Mode != 0o755 {
		t.Errorf("executor mode %o", h.Mode)
	}
	// The same inputs give the same context.
	again, _ := ContextBytes(Sources{Executor: bb, Busybox: bb})
	if !bytes.Equal(data, again) {
		t.Error("the build context is not reproducible")
	}
}

func TestContextRefusesWhatCannotRun(t *testing.T) {
	bb := staticBinary(t)
	dir := t.TempDir()
	text := dir + "/script"
	os.WriteFile(text, []byte("#!/bin/sh\necho hi\n"), 0o755)
	dynamic := "/bin/ls" // dynamically linked on every Debian
	for _, k := range []struct {
		name string
		src  Sources
		want string
	}{
		{"no executor", Sources{Busybox: bb}, "no path given"},
		{"missing executor", Sources{Executor: dir + "/nope", Busybox: bb}, "no such file"},
		{"script", Sources{Executor: text, Busybox: bb}, "not an ELF"},
		{"dynamic executor", Sources{Executor: dynamic, Busybox: bb}, "dynamically linked"},
		{"dynamic busybox", Sources{Executor: bb, Busybox: dynamic}, "busybox-static"},
	} {
		t.Run(k.name, func(t *testing.T) {
			_, err := ContextBytes(k.src)
			if err == nil || !strings.Contains(err.Error(), k.want) {
				t.Fatalf("got %v, want an error saying %q", err, k.want)
			}
		})
	}
}

func TestReadBuild(t *testing.T) {
	var out bytes.Buffer
	id, err := readBuild(strings.NewReader(`{"stream":"Step 1/2 : FROM scratch\n"}
{"aux":{"ID":"sha256:abc"}}
{"stream":"Successfully built abc\n"}`), &out)
	if err != nil || id != "sha256:abc" || !strings.Contains(out.String(), "Step 1/2") {
		t.Fatalf("id %q err %v out %q", id, err, out.String())
	}
	if _, err := readBuild(strings.NewReader(`{"stream":"x"}{"errorDetail":{"message":"COPY failed"},"error":"COPY failed"}`), nil); err == nil || !strings.Contains(err.Error(), "COPY failed") {
		t.Fatalf("build error: %v", err)
	}
	if _, err := readBuild(strings.NewReader(`{"stream":`), nil); err == nil {
		t.Fatal("truncated stream accepted")
	}
}
