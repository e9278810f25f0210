package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon"
)

// TestDaemonBadConfigFile: a config file with an unknown key or a value of
// the wrong type stops "toolcage daemon" with exit 2, naming the file and
// the key, before it creates its socket or data dir.
func TestDaemonBadConfigFile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ yaml, want string }{
		{"log:\n  level: info\n  bogus: 1\n", `unknown key "log.bogus"`},
		{"executor:\n  max_per_key: lots\n", `executor.max_per_key: want a whole number, got "lots"`},
	}
	for i, tt := range tests {
		file := filepath.Join(dir, "bad.yaml")
		if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		sock, data := filepath.Join(dir, "d.sock"), filepath.Join(dir, "data")
		r := runCLI(t, "", "daemon", "--socket", sock, "--data-dir", data, "--config", file)
		wantExit(t, r, exitUsage, "Error: config "+file+": "+tt.want)
		if r.out != "" || strings.Count(r.err, "\n") != 1 {
			t.Errorf("case %d: want one line on stderr only: %v", i, r)
		}
		for _, p := range []string{sock, data} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("case %d: a refused daemon left %s: %v", i, p, err)
			}
		}
	}
}

// TestLogDurations: the daemon's JSON log writes durations as "30s", not
// nanoseconds, at the top level and inside groups.
func TestLogDurations(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		log := newLogger(&buf, daemon.LogConfig{Level: "info", Format: format})
		log.Info("stopped", "timeout", 30*time.Second, slog.Group("call", "took", 1500*time.Microsecond), "n", 3)
		if format == "text" {
			if !strings.Contains(buf.String(), "timeout=30s call.took=1.5ms n=3") {
				t.Errorf("text log: %s", buf.String())
			}
			continue
		}
		var rec struct {
			Timeout string `json:"timeout"`
			Call    struct {
				Took string `json:"took"`
			} `json:"call"`
			N int `json:"n"`
		}
		if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
			t.Fatalf("%v: %s", err, buf.String())
		}
		if rec.Timeout != "30s" || rec.Call.Took != "1.5ms" || rec.N != 3 {
			t.Errorf("json log: %s", buf.String())
		}
	}
}

// TestFallbackSocketDirRefused: the per-user socket directory in /tmp that
// someone else prepared (here: mode 0755) is refused by the client before it
// connects and by the daemon before it listens.
func TestFallbackSocketDirRefused(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(tmp, "toolcage-"+strconv.Itoa(os.Geteuid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "toolcage.sock")
	wantExit(t, runCLI(t, "", "--socket", sock, "health"), exitFailure, "socket dir "+dir+" has mode 0755, want 0700")
	// The sandbox is off: its probe comes before the socket, and this test
	// is about the socket.
	cfg := writeFile(t, "nosandbox.yaml", "sandbox:\n  enabled: false\n")
	r := runCLI(t, "", "daemon", "--socket", sock, "--config", cfg, "--data-dir", t.TempDir(), "--executor", executorPath)
	wantExit(t, r, exitFailure, "has mode 0755, want 0700")
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("a socket was made: %v", err)
	}
}
