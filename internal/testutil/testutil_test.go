package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestSyncBuffer(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("x"))
			}
		}()
	}
	wg.Wait()
	if got := len(b.String()); got != 800 {
		t.Fatalf("wrote 800 bytes, read %d", got)
	}
}

func TestBinariesUnknown(t *testing.T) {
	t.Setenv(BinDirEnv, "")
	if _, err := Binaries(t.TempDir(), "no-such-main"); err == nil || !strings.Contains(err.Error(), "no-such-main") {
		t.Fatalf("err = %v, want one naming the binary", err)
	}
}

// A TOOLCAGE_BIN_DIR that lacks a binary is passed over for dir.
func TestBinariesIncompleteBinDir(t *testing.T) {
	bin, dir := t.TempDir(), t.TempDir()
	t.Setenv(BinDirEnv, bin)
	for _, n := range []string{"toolcage-executor", "toolcage-sandbox"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("stand-in"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Executor(dir)
	if err != nil || got != filepath.Join(dir, "toolcage-executor") {
		t.Fatalf("Executor = %q, %v; want the one in dir", got, err)
	}
	if err := os.WriteFile(filepath.Join(bin, "toolcage-executor"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := Executor(dir); got != filepath.Join(bin, "toolcage-executor") {
		t.Fatalf("Executor = %q, want the one in %s", got, BinDirEnv)
	}
}

func TestModuleRoot(t *testing.T) {
	if !IsFile(filepath.Join(ModuleRoot(), "go.mod")) {
		t.Fatalf("no go.mod in %s", ModuleRoot())
	}
}
