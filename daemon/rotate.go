package daemon

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolcage/toolcage/daemon/apiserver"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/store"
)

// secretsKey is the key that encrypts stored secrets, swapped by a
// rotation while calls read it. Every store operation that takes the key
// runs under the read lock, so a rotation (the write lock) never re-seals
// the table between a reader taking the key and using it, and a secret
// set concurrently is never sealed under a key that was just retired.
type secretsKey struct {
	mu  sync.RWMutex
	key []byte
}

func newSecretsKey(key []byte) *secretsKey { return &secretsKey{key: key} }

// use runs fn with the current key; fn must not keep it.
func (k *secretsKey) use(fn func(key []byte) error) error {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return fn(k.key)
}

// getSecret decrypts one stored secret with the current key.
func (k *secretsKey) getSecret(ctx context.Context, st *store.Store, name string) (raw []byte, err error) {
	err = k.use(func(key []byte) error {
		raw, err = st.GetSecret(ctx, key, name)
		return err
	})
	return raw, err
}

// rotate replaces the key: a new random key is written durably to
// path+".new", every secret is re-encrypted to it in one transaction, the
// new file is renamed over path, and only then is the key in memory
// swapped. On any failure before the rename the old key stays in force and
// the .new file is removed. A .new file left by an earlier rotation stops
// this one: if the daemon died between the re-encryption and the rename,
// that file holds the key the secrets are sealed under.
func (k *secretsKey) rotate(ctx context.Context, st *store.Store, path string) (err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	newKey := make([]byte, store.KeySize)
	if _, err := rand.Read(newKey); err != nil {
		return fmt.Errorf("rotate secrets key: %w", err)
	}
	tmp := path + ".new"
	if err := writeKeyFile(tmp, newKey); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errdefs.Errorf(errdefs.Conflict,
				"%s exists, left by an earlier rotation that did not finish: if stored secrets no longer decrypt it holds their key (move it over %s); otherwise remove it and rotate again", tmp, path)
		}
		return fmt.Errorf("rotate secrets key: %w", err)
	}
	if err := st.RotateSecretsKey(ctx, k.key, newKey); err != nil {
		_ = os.Remove(tmp)
		if errors.Is(err, store.ErrDecrypt) {
			return errdefs.Errorf(errdefs.Internal, "rotate secrets key: a stored secret does not decrypt with the current key; nothing was changed: %v", err)
		}
		return fmt.Errorf("rotate secrets key: nothing was changed: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		// The table is sealed under newKey now: put it back under the old
		// one, or else keep newKey in memory and its file on disk.
		if rerr := st.RotateSecretsKey(context.WithoutCancel(ctx), newKey, k.key); rerr != nil {
			k.key = newKey
			return fmt.Errorf("rotate secrets key: renaming %s over %s: %v; the secrets are sealed under the key in %s, which this daemon now uses: move it over %s by hand (undoing: %v)",
				tmp, path, err, tmp, path, rerr)
		}
		_ = os.Remove(tmp)
		return fmt.Errorf("rotate secrets key: renaming %s over %s: %w; the old key stays in force", tmp, path, err)
	}
	syncDir(filepath.Dir(path))
	k.key = newKey
	return nil
}

// writeKeyFile creates path (which must not exist) holding key, mode 0600,
// synced to disk.
func writeKeyFile(path string, key []byte) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(path)
		}
	}()
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		syncDir(filepath.Dir(path))
	}
	return err
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// keyOf is the secrets key as the socket API's handlers use it.
type keyOf struct {
	k    *secretsKey
	st   *store.Store
	file string
}

func (k keyOf) Use(fn func(key []byte) error) error { return k.k.use(fn) }

func (k keyOf) Rotate(ctx context.Context) error { return k.k.rotate(ctx, k.st, k.file) }

// Interface guards.
var _ apiserver.SecretsKey = keyOf{}
