package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var sudoRE = regexp.MustCompile(`(?i)\bsudo\b`)

// TestMakeInstall runs 'make install' into a DESTDIR: the three binaries,
// the systemd unit pointing at them, the man page and the completions. The
// toolcage binary is this test binary, which runs as the CLI.
func TestMakeInstall(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Fatal("make is needed for this test: ", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, dest := t.TempDir(), t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "toolcage")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"toolcage-executor", "toolcage-sandbox"} {
		if err := os.WriteFile(filepath.Join(bin, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))

	// Without the built binaries, install says to build and stops.
	cmd := exec.Command(mk, "-C", root, "--no-print-directory", "install", "BIN="+t.TempDir(), "DESTDIR="+dest)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "run 'make build' first") {
		t.Errorf("install without a build: %v\n%s", err, out)
	}

	cmd = exec.Command(mk, "-C", root, "--no-print-directory", "install", "BIN="+bin, "DESTDIR="+dest, "PREFIX=/opt/tc")
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for path, mode := range map[string]os.FileMode{
		"opt/tc/bin/toolcage": 0o755, "opt/tc/bin/toolcage-executor": 0o755, "opt/tc/bin/toolcage-sandbox": 0o755,
		"opt/tc/lib/systemd/system/toolcage.service":           0o644,
		"opt/tc/lib/systemd/system/toolcage.socket":            0o644,
		"opt/tc/share/man/man1/toolcage.1":                     0,
		"opt/tc/share/bash-completion/completions/toolcage":    0,
		"opt/tc/share/zsh/site-functions/_toolcage":            0,
		"opt/tc/share/fish/vendor_completions.d/toolcage.fish": 0,
	} {
		fi, err := os.Stat(filepath.Join(dest, path))
		switch {
		case err != nil:
			t.Errorf("%s: %v", path, err)
		case fi.Size() == 0:
			t.Errorf("%s is empty", path)
		case mode != 0 && fi.Mode().Perm() != mode:
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), mode)
		}
	}
	unit, _ := os.ReadFile(filepath.Join(dest, "opt/tc/lib/systemd/system/toolcage.service"))
	if !strings.Contains(string(unit), "\nExecStart=/opt/tc/bin/toolcage daemon ") || strings.Contains(string(unit), "@") {
		t.Errorf("unit:\n%s", unit)
	}
	for _, want := range []string{"\nType=notify\n", "\nSockets=toolcage.socket\n", "\nDelegate=yes\n", "\nRequires=toolcage.socket\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	sock, _ := os.ReadFile(filepath.Join(dest, "opt/tc/lib/systemd/system/toolcage.socket"))
	// The daemon started by hand and the socket unit name the same path.
	if !strings.Contains(string(sock), "\nListenStream=/run/toolcage/toolcage.sock\n") || !strings.Contains(string(unit), " --socket /run/toolcage/toolcage.sock ") ||
		!strings.Contains(string(sock), "\nSocketMode=0600\n") {
		t.Errorf("socket unit:\n%s", sock)
	}
	verifyUnits(t, dest, string(unit), string(sock))
	man, _ := os.ReadFile(filepath.Join(dest, "opt/tc/share/man/man1/toolcage.1"))
	if !strings.HasPrefix(string(man), ".nh\n.TH toolcage 1") {
		t.Errorf("man page: %.100s", man)
	}
}

// verifyUnits runs systemd-analyze verify over the installed units, with
// ExecStart pointing into dest, where the binary is: it checks every key
// and that the service and its socket go together.
func verifyUnits(t *testing.T, dest, service, socket string) {
	t.Helper()
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze is needed for this test (scripts/deps.sh installs it): ", err)
	}
	dir := t.TempDir()
	service = strings.ReplaceAll(service, "=/opt/tc/bin/", "="+filepath.Join(dest, "opt/tc/bin")+"/")
	for name, text := range map[string]string{"toolcage.service": service, "toolcage.socket": socket} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(sa, "verify", "--man=no", filepath.Join(dir, "toolcage.socket"), filepath.Join(dir, "toolcage.service")).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// Older systemd (before 254) does not know DelegateSubgroup= and
		// ignores it; every other complaint is ours.
		if line != "" && !strings.Contains(line, "Unknown key 'DelegateSubgroup'") {
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
}

// TestBuildNoSudo: 'make build' (and the deps script it runs) never calls
// sudo.
func TestBuildNoSudo(t *testing.T) {
	root := filepath.Join("..", "..")
	out, err := exec.Command("make", "-C", root, "-n", "build").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	deps, err := os.ReadFile(filepath.Join(root, "scripts", "deps.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "deps.sh") {
		t.Errorf("make -n build does not run deps.sh:\n%s", out)
	}
	for name, text := range map[string]string{"make -n build": string(out), "scripts/deps.sh": string(deps)} {
		for _, line := range strings.Split(text, "\n") {
			// Advice printed with echo is fine; running it is not.
			if l := strings.TrimSpace(line); !strings.HasPrefix(l, "#") && sudoRE.MatchString(l) && !strings.HasPrefix(l, "echo ") {
				t.Errorf("%s calls sudo: %s", name, l)
			}
		}
	}
}
