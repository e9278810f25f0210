// Package image builds the executor's container image with the Docker
// Engine API, from a build context made here in Go: no registry and no base
// image, only the static toolcage-executor, a static busybox as /bin/sh and
// the usual commands, a non-root user and the directories the executor
// needs. It also checks, for the daemon, that the image a config pins is
// the one the engine has.
package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

// The image's fixed layout.
const (
	// ExecutorPath is the executor inside the image; the container's
	// entrypoint.
	ExecutorPath = "/usr/local/bin/toolcage-executor"
	// WorkDir is the executor's work dir, a tmpfs at run time.
	WorkDir = "/work"
	// UID and GID are the non-root user every container runs as.
	UID = 65532
	GID = 65532
	// User is its name in /etc/passwd.
	User = "toolcage"
	// Repository is the image name; the tag is the toolcage version.
	Repository = "toolcage-executor"
	// Label marks the image as ours.
	Label = "io.toolcage.image"
)

// Applets are the busybox commands linked in /bin: what shell tools
// usually call. Anything else busybox has runs as `busybox NAME`.
var Applets = []string{
	"[", "[[", "awk", "base64", "basename", "cat", "chmod", "cmp", "cp", "cut", "date", "dd",
	"df", "diff", "dirname", "du", "echo", "env", "expr", "false", "find", "fold", "grep",
	"egrep", "fgrep", "gunzip", "gzip", "head", "hexdump", "id", "kill", "ln", "ls", "md5sum",
	"mkdir", "mktemp", "mv", "nl", "od", "paste", "printf", "ps", "pwd", "readlink", "realpath",
	"rev", "rm", "rmdir", "sed", "seq", "sh", "sha1sum", "sha256sum", "sha512sum", "sleep",
	"sort", "split", "stat", "strings", "tail", "tar", "tee", "test", "timeout", "touch", "tr",
	"true", "uname", "uniq", "unzip", "wc", "which", "whoami", "xargs", "yes", "zcat",
}

// DefaultBusybox is where Debian's busybox-static puts its binary.
const DefaultBusybox = "/bin/busybox"

// Sources are the host files the image is made of.
type Sources struct {
	// Executor is the static toolcage-executor (CGO_ENABLED=0).
	Executor string
	// Busybox is a static busybox; empty: DefaultBusybox.
	Busybox string
}

// dockerfile copies the context's root over an empty image. The runner
// sets user, work dir and environment on every container; the image's
// own USER only keeps a bare `docker run` of it off root. (Each further
// instruction costs the classic builder a container.)
const dockerfile = `FROM scratch
COPY rootfs/ /
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/toolcage-executor"]
`

// Context writes the build context (a tar stream: Dockerfile plus rootfs/)
// to w. Both binaries must be static: the image has no libc.
func Context(w io.Writer, src Sources) error {
	if src.Busybox == "" {
		src.Busybox = DefaultBusybox
	}
	exe, err := readStatic(src.Executor, "executor")
	if err != nil {
		return err
	}
	bb, err := readStatic(src.Busybox, "busybox")
	if err != nil {
		return fmt.Errorf("%w (on Debian: apt-get install busybox-static)", err)
	}
	tw := tar.NewWriter(w)
	// A fixed time, so the same binaries give the same context.
	mtime := time.Unix(0, 0)
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: mtime, Format: tar.FormatPAX})
	}
	link := func(name, target string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: mtime, Format: tar.FormatPAX})
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/nonexistent:/bin/false\n%s:x:%d:%d:toolcage executor:%s:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n", User, UID, GID, WorkDir)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\nnogroup:x:65534:\n", User, GID)
	steps := []func() error{
		func() error { return file("Dockerfile", 0o644, []byte(dockerfile)) },
		func() error { return dir("rootfs", 0o755) },
		func() error { return dir("rootfs/bin", 0o755) },
		func() error { return file("rootfs/bin/busybox", 0o755, bb) },
		func() error { return dir("rootfs/usr", 0o755) },
		func() error { return dir("rootfs/usr/local", 0o755) },
		func() error { return dir("rootfs/usr/local/bin", 0o755) },
		func() error { return file("rootfs"+ExecutorPath, 0o755, exe) },
		func() error { return dir("rootfs/etc", 0o755) },
		func() error { return file("rootfs/etc/passwd", 0o644, []byte(passwd)) },
		func() error { return file("rootfs/etc/group", 0o644, []byte(group)) },
		// Names resolve through the network guard's resolver; the file
		// only keeps libc-style lookups of localhost sane.
		func() error { return file("rootfs/etc/hosts", 0o644, []byte("127.0.0.1 localhost\n::1 localhost\n")) },
		func() error { return dir("rootfs/tmp", 0o1777) },
		func() error { return dir("rootfs"+WorkDir, 0o755) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return fmt.Errorf("build context: %w", err)
		}
	}
	applets := append([]string(nil), Applets...)
	sort.Strings(applets)
	for _, a := range applets {
		if err := link("rootfs/bin/"+a, "busybox"); err != nil {
			return fmt.Errorf("build context: %w", err)
		}
	}
	return tw.Close()
}

// ContextBytes is Context into memory (the image is a few tens of MB).
func ContextBytes(src Sources) ([]byte, error) {
	var buf bytes.Buffer
	if err := Context(&buf, src); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readStatic reads an ELF executable and refuses one that needs a dynamic
// loader: in an image from scratch it could not start.
func readStatic(path, what string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("%s binary: no path given", what)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s binary: %w", what, err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s binary %s: not an ELF executable: %w", what, path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return nil, fmt.Errorf("%s binary %s is dynamically linked; the image needs a static one", what, path)
		}
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return nil, errors.New(what + " binary " + path + " is not an executable")
	}
	return data, nil
}
