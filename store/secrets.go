package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// ErrDecrypt means a secret could not be decrypted: the key is not the one
// that sealed it, or the stored row was altered or moved to another name.
var ErrDecrypt = errors.New("cannot decrypt secret")

// secretAADPrefix starts the associated data of every sealed secret; the
// secret's name follows it. Binding the name means a ciphertext copied to
// another row fails to open, and the prefix keeps these ciphertexts apart
// from anything else the same key might seal.
const secretAADPrefix = "toolcage secret v1\x00"

// validSecretName is the form of a secret's name.
var validSecretName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// SecretInfo describes a stored secret without its value.
type SecretInfo struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SetSecret stores value under name, replacing any value already there,
// encrypted with AES-256-GCM under key (KeySize bytes) with a fresh random
// nonce and name as associated data. The value is opaque to the store: a
// plain string or a JSON document of a service's fields and named entries
// is the caller's choice. A name not matching ^[a-z][a-z0-9_]*$ or a key of
// the wrong size gives ErrInvalid. Only the ciphertext reaches the database.
func (s *Store) SetSecret(ctx context.Context, key []byte, name string, value []byte) error {
	if err := checkSecretName(name); err != nil {
		return fmt.Errorf("store: set secret: %w", err)
	}
	aead, err := newAEAD(key)
	if err != nil {
		return fmt.Errorf("store: set secret %q: %w", name, err)
	}
	nonce, ct, err := sealSecret(aead, name, value)
	if err != nil {
		return fmt.Errorf("store: set secret %q: %w", name, err)
	}
	now := s.now().UnixNano()
	_, err = s.wdb.ExecContext(ctx, `INSERT INTO secrets (name, nonce, ciphertext, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET nonce = excluded.nonce, ciphertext = excluded.ciphertext,
			updated_at = excluded.updated_at`,
		name, nonce, ct, now, now)
	if err != nil {
		return fmt.Errorf("store: set secret %q: %w", name, err)
	}
	return nil
}

// GetSecret returns the value of the secret called name, decrypted with key.
// It returns ErrNotFound if there is no such secret, ErrDecrypt if key did
// not seal it (or the row was tampered with) and ErrInvalid for a key of the
// wrong size.
func (s *Store) GetSecret(ctx context.Context, key []byte, name string) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, fmt.Errorf("store: get secret %q: %w", name, err)
	}
	var nonce, ct []byte
	err = s.rdb.QueryRowContext(ctx, `SELECT nonce, ciphertext FROM secrets WHERE name = ?`, name).
		Scan(&nonce, &ct)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: secret %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get secret %q: %w", name, err)
	}
	value, err := openSecret(aead, name, nonce, ct)
	if err != nil {
		return nil, fmt.Errorf("store: get secret %q: %w", name, err)
	}
	return value, nil
}

// DeleteSecret deletes the secret called name, or returns ErrNotFound.
func (s *Store) DeleteSecret(ctx context.Context, name string) error {
	res, err := s.wdb.ExecContext(ctx, `DELETE FROM secrets WHERE name = ?`, name)
	if err := affectedOne(res, err); err != nil {
		return fmt.Errorf("store: delete secret %q: %w", name, err)
	}
	return nil
}

// ListSecrets returns every secret's name and times, ordered by name. It
// never reads a value.
func (s *Store) ListSecrets(ctx context.Context) ([]SecretInfo, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT name, created_at, updated_at FROM secrets ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list secrets: %w", err)
	}
	defer rows.Close()
	list := []SecretInfo{}
	for rows.Next() {
		var (
			info             SecretInfo
			created, updated sql.NullInt64
		)
		if err := rows.Scan(&info.Name, &created, &updated); err != nil {
			return nil, fmt.Errorf("store: list secrets: %w", err)
		}
		info.CreatedAt, info.UpdatedAt = fromNanos(created), fromNanos(updated)
		list = append(list, info)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list secrets: %w", err)
	}
	return list, nil
}

// RotateSecretsKey re-encrypts every secret from oldKey to newKey, each with
// a fresh nonce, in one transaction: if any secret fails to decrypt with
// oldKey (ErrDecrypt, naming the secret) or anything else fails, nothing is
// changed. Times are left alone: the values did not change. Store newKey
// durably before calling, and discard oldKey only after this returns nil.
func (s *Store) RotateSecretsKey(ctx context.Context, oldKey, newKey []byte) error {
	oldA, err := newAEAD(oldKey)
	if err != nil {
		return fmt.Errorf("store: rotate secrets key: old key: %w", err)
	}
	newA, err := newAEAD(newKey)
	if err != nil {
		return fmt.Errorf("store: rotate secrets key: new key: %w", err)
	}

	tx, err := s.wdb.BeginTx(ctx, nil) // BEGIN IMMEDIATE: no writer slips in
	if err != nil {
		return fmt.Errorf("store: rotate secrets key: %w", err)
	}
	defer rollback(tx)

	type sealed struct {
		name      string
		nonce, ct []byte
	}
	var all []sealed
	rows, err := tx.QueryContext(ctx, `SELECT name, nonce, ciphertext FROM secrets ORDER BY name`)
	if err != nil {
		return fmt.Errorf("store: rotate secrets key: %w", err)
	}
	for rows.Next() {
		var r sealed
		if err := rows.Scan(&r.name, &r.nonce, &r.ct); err != nil {
			rows.Close()
			return fmt.Errorf("store: rotate secrets key: %w", err)
		}
		all = append(all, r)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return fmt.Errorf("store: rotate secrets key: %w", err)
	}

	upd, err := tx.PrepareContext(ctx, `UPDATE secrets SET nonce = ?, ciphertext = ? WHERE name = ?`)
	if err != nil {
		return fmt.Errorf("store: rotate secrets key: %w", err)
	}
	defer upd.Close()
	for _, r := range all {
		value, err := openSecret(oldA, r.name, r.nonce, r.ct)
		if err != nil {
			return fmt.Errorf("store: rotate secrets key: secret %q: %w", r.name, err)
		}
		nonce, ct, err := sealSecret(newA, r.name, value)
		clear(value)
		if err != nil {
			return fmt.Errorf("store: rotate secrets key: secret %q: %w", r.name, err)
		}
		if _, err := upd.ExecContext(ctx, nonce, ct, r.name); err != nil {
			return fmt.Errorf("store: rotate secrets key: secret %q: %w", r.name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: rotate secrets key: %w", err)
	}
	return nil
}

func checkSecretName(name string) error {
	if !validSecretName.MatchString(name) {
		return fmt.Errorf("%w: secret name %q must match ^[a-z][a-z0-9_]*$", ErrInvalid, name)
	}
	return nil
}

// newAEAD returns AES-256-GCM keyed with key, which must be KeySize bytes.
func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: key is %d bytes, want %d", ErrInvalid, len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealSecret encrypts value for the secret called name under a new random nonce.
func sealSecret(aead cipher.AEAD, name string, value []byte) (nonce, ct []byte, err error) {
	nonce = make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, err
	}
	return nonce, aead.Seal(nil, nonce, value, secretAAD(name)), nil
}

// openSecret decrypts what sealSecret returned for the secret called name.
func openSecret(aead cipher.AEAD, name string, nonce, ct []byte) ([]byte, error) {
	if len(nonce) != aead.NonceSize() {
		return nil, fmt.Errorf("%w: stored nonce is %d bytes, want %d", ErrDecrypt, len(nonce), aead.NonceSize())
	}
	value, err := aead.Open(nil, nonce, ct, secretAAD(name))
	if err != nil {
		return nil, ErrDecrypt
	}
	if value == nil {
		value = []byte{} // an empty secret is stored, not missing
	}
	return value, nil
}

func secretAAD(name string) []byte {
	return []byte(secretAADPrefix + name)
}
