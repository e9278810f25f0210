package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/store"
)

func TestRotateSecretsKey(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	keyFile := td.cfg.Secrets.KeyFile
	oldKey, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	v, v2 := secretValue, "second-Value-77xQ"
	putSecret(t, c, "api_token", api.SecretValue{Value: &v})
	putSecret(t, c, "other", api.SecretValue{Value: &v2})
	create(t, c, `{"name":"token_len","description":"d","kind":"shell","secrets":["api_token","other"],
		"shell":{"command":"sh -c 'printf %s \"$TOKEN\" | wc -c; printf %s \"$OTHER\" | wc -c'","env":{"TOKEN":"{{secret.api_token}}","OTHER":"{{secret.other}}"}}}`)
	wantOut := strconv.Itoa(len(v)) + "\n" + strconv.Itoa(len(v2)) + "\n"
	call := func() error {
		r, err := callTool(c, "token_len", nil)
		if err != nil {
			return err
		}
		var out shellResult
		if err := json.Unmarshal(r.Result, &out); err != nil || out.Stdout != wantOut {
			return errors.New("output " + string(r.Result))
		}
		return nil
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}

	// Not for models.
	if err := llm(c).Do(ctx, "POST", "/v1/secrets/rotate", nil, nil); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("llm rotate: %v", err)
	}

	// Calls run while the key turns over.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() {
			for range 2 {
				if err := call(); err != nil {
					errs <- err
				}
			}
		})
	}
	var rot api.SecretsRotation
	if err := c.Do(ctx, "POST", "/v1/secrets/rotate", nil, &rot); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("call during rotation: %v", err)
	}
	if rot.Secrets != 2 || rot.KeyFile != keyFile {
		t.Fatalf("rotation: %+v", rot)
	}
	newKey, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(keyFile)
	if len(newKey) != store.KeySize || bytes.Equal(newKey, oldKey) || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file after rotation: %d bytes, changed %v, mode %v", len(newKey), !bytes.Equal(newKey, oldKey), fi.Mode())
	}
	if _, err := os.Stat(keyFile + ".new"); !os.IsNotExist(err) {
		t.Fatalf(".new left behind: %v", err)
	}
	if err := call(); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	// The store itself: the old key opens nothing, the new file's key does.
	for _, n := range []string{"api_token", "other"} {
		if _, err := td.d.store.GetSecret(ctx, oldKey, n); !errors.Is(err, store.ErrDecrypt) {
			t.Fatalf("old key still opens %s: %v", n, err)
		}
		raw, err := td.d.store.GetSecret(ctx, newKey, n)
		if err != nil || !strings.Contains(string(raw), map[string]string{"api_token": v, "other": v2}[n]) {
			t.Fatalf("new key on %s: %v", n, err)
		}
	}
	// A secret set after the rotation is sealed under the new key.
	v3 := "third-value-abcdef"
	putSecret(t, c, "third", api.SecretValue{Value: &v3})
	if _, err := td.d.store.GetSecret(ctx, newKey, "third"); err != nil {
		t.Fatal(err)
	}

	// A .new left by a rotation that did not finish stops the next one,
	// and nothing changes.
	if err := os.WriteFile(keyFile+".new", make([]byte, store.KeySize), 0o600); err != nil {
		t.Fatal(err)
	}
	err = c.Do(ctx, "POST", "/v1/secrets/rotate", nil, nil)
	if ae := apiErr(t, err); ae.Code != errdefs.Conflict || !strings.Contains(ae.Message, ".new exists") {
		t.Fatalf("leftover .new: %+v", ae)
	}
	if b, _ := os.ReadFile(keyFile); !bytes.Equal(b, newKey) {
		t.Fatal("key file changed by a refused rotation")
	}
	if b, _ := os.ReadFile(keyFile + ".new"); !bytes.Equal(b, make([]byte, store.KeySize)) {
		t.Fatal("a refused rotation touched the leftover .new")
	}
	if err := call(); err != nil {
		t.Fatalf("after refused rotation: %v", err)
	}
	os.Remove(keyFile + ".new")

	// A rotation the store refuses (a secret sealed under another key)
	// keeps the old key and removes its .new.
	if err := td.d.store.SetSecret(ctx, oldKey, "stray", []byte(`{"value":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "POST", "/v1/secrets/rotate", nil, nil); err == nil {
		t.Fatal("rotation over an undecryptable secret succeeded")
	}
	if b, _ := os.ReadFile(keyFile); !bytes.Equal(b, newKey) {
		t.Fatal("key file changed by a failed rotation")
	}
	if _, err := os.Stat(keyFile + ".new"); !os.IsNotExist(err) {
		t.Fatalf(".new left behind by a failed rotation: %v", err)
	}
	if err := call(); err != nil {
		t.Fatalf("after failed rotation: %v", err)
	}

	// The rotated key survives a restart.
	td.stop()
	td2 := startDaemon(t, td.cfg.DataDir, func(cfg *Config) { cfg.Secrets.KeyFile = keyFile })
	r, err := callTool(td2.client, "token_len", nil)
	if err != nil || shellOut(t, r).Stdout != wantOut {
		t.Fatalf("after restart: %+v %v", r, err)
	}
}
