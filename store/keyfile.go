package store

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// KeySize is the length in bytes of the key that encrypts secrets
// (AES-256).
const KeySize = 32

// LoadOrCreateKey returns the secrets key kept in the file at path. If the
// file does not exist it is created (mode 0600, parent directories 0700, with
// O_EXCL so an existing file is never overwritten) holding KeySize random
// bytes. An existing file is refused, not repaired, if it is not a regular
// file, if group or others have any permission on it, or if it does not hold
// exactly KeySize bytes: each of these means the key may have leaked or is
// not the key that sealed the secrets.
func LoadOrCreateKey(path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("store: key file: %w: empty path", ErrInvalid)
	}
	key, err := loadKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	key, err = createKey(path)
	if errors.Is(err, fs.ErrExist) {
		// Another process created it between our open and our create.
		return loadKey(path)
	}
	return key, err
}

// loadKey reads and checks an existing key file. A missing file gives an
// error wrapping fs.ErrNotExist.
func loadKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("store: key file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("store: key file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("store: key file %s is not a regular file (mode %s)", path, fi.Mode())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("store: key file %s has mode %04o: group and others must have no access; run chmod 600 %s if the key has not leaked, else rotate it",
			path, perm, path)
	}
	if fi.Size() != KeySize {
		return nil, fmt.Errorf("store: key file %s holds %d bytes, want exactly %d", path, fi.Size(), KeySize)
	}
	// Read one byte more than needed to catch a file that grew after Stat.
	buf := make([]byte, KeySize+1)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("store: key file %s: %w", path, err)
	}
	if n != KeySize {
		clear(buf)
		return nil, fmt.Errorf("store: key file %s holds %d bytes, want exactly %d", path, n, KeySize)
	}
	return buf[:KeySize:KeySize], nil
}

// createKey writes a new random key to path, which must not exist. On
// failure it removes the file it created so the next start does not find a
// truncated key.
func createKey(path string) (_ []byte, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: key file: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("store: key file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: key file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(path) // the write error is the one to report
			clear(key)
		}
	}()
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("store: key file %s: %w", path, err)
	}
	// Make the new directory entry durable too; a failure here is not worth
	// losing a key already written and synced.
	if d, derr := os.Open(filepath.Dir(path)); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return key, nil
}
