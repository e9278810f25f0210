package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testKey returns a KeySize key filled with b.
func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

// rawSecret reads the stored nonce and ciphertext of name.
func rawSecret(t *testing.T, s *Store, name string) (nonce, ct []byte) {
	t.Helper()
	err := s.rdb.QueryRow(`SELECT nonce, ciphertext FROM secrets WHERE name = ?`, name).Scan(&nonce, &ct)
	if err != nil {
		t.Fatalf("read raw secret %q: %v", name, err)
	}
	return nonce, ct
}

func mustGet(t *testing.T, s *Store, key []byte, name string) []byte {
	t.Helper()
	v, err := s.GetSecret(context.Background(), key, name)
	if err != nil {
		t.Fatalf("GetSecret(%q): %v", name, err)
	}
	return v
}

func mustSet(t *testing.T, s *Store, key []byte, name string, value []byte) {
	t.Helper()
	if err := s.SetSecret(context.Background(), key, name, value); err != nil {
		t.Fatalf("SetSecret(%q): %v", name, err)
	}
}

func TestSecretRoundTrip(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	key := testKey(1)

	service := []byte(`{"fields":{"api_key":"sk-live-abc123","base_url":"https://api.example.com"},` +
		`"entries":[{"label":"backup","fields":{"api_key":"sk-live-def456"}}]}`)
	cases := map[string][]byte{
		"weather_api": service,
		"plain":       []byte(`"just a string"`),
		"empty":       {},
		"binary":      {0, 1, 2, 0xff},
	}
	for name, v := range cases {
		mustSet(t, s, key, name, v)
	}
	for name, want := range cases {
		if got := mustGet(t, s, key, name); !bytes.Equal(got, want) || got == nil {
			t.Errorf("GetSecret(%q) = %q, want %q", name, got, want)
		}
	}

	// Upsert replaces the value.
	mustSet(t, s, key, "plain", []byte("new"))
	if got := mustGet(t, s, key, "plain"); string(got) != "new" {
		t.Errorf("after update = %q, want new", got)
	}

	if _, err := s.GetSecret(ctx, key, "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetSecret(missing) = %v, want ErrNotFound", err)
	}
	if err := s.DeleteSecret(ctx, "plain"); err != nil {
		t.Fatalf("DeleteSecret: %v", err)
	}
	if _, err := s.GetSecret(ctx, key, "plain"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetSecret after delete = %v, want ErrNotFound", err)
	}
	if err := s.DeleteSecret(ctx, "plain"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second DeleteSecret = %v, want ErrNotFound", err)
	}
}

func TestSecretInvalidInput(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	for _, name := range []string{"", "Upper", "1abc", "_x", "a-b", "a b", "a.b", "é", "a\x00"} {
		if err := s.SetSecret(ctx, testKey(1), name, []byte("v")); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetSecret(%q) = %v, want ErrInvalid", name, err)
		}
	}
	for _, key := range [][]byte{nil, make([]byte, 16), make([]byte, 31), make([]byte, 33)} {
		if err := s.SetSecret(ctx, key, "ok", []byte("v")); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetSecret with %d-byte key = %v, want ErrInvalid", len(key), err)
		}
		if _, err := s.GetSecret(ctx, key, "ok"); !errors.Is(err, ErrInvalid) {
			t.Errorf("GetSecret with %d-byte key = %v, want ErrInvalid", len(key), err)
		}
		if err := s.RotateSecretsKey(ctx, key, testKey(1)); !errors.Is(err, ErrInvalid) {
			t.Errorf("RotateSecretsKey with %d-byte old key = %v, want ErrInvalid", len(key), err)
		}
		if err := s.RotateSecretsKey(ctx, testKey(1), key); !errors.Is(err, ErrInvalid) {
			t.Errorf("RotateSecretsKey with %d-byte new key = %v, want ErrInvalid", len(key), err)
		}
	}
	for _, name := range []string{"a", "a1", "a_b_2", "z__"} {
		if err := s.SetSecret(ctx, testKey(1), name, []byte("v")); err != nil {
			t.Errorf("SetSecret(%q) = %v", name, err)
		}
	}
}

func TestSecretFreshNonce(t *testing.T) {
	s := openTest(t)
	key := testKey(1)
	value := []byte("same value")

	mustSet(t, s, key, "a", value)
	n1, c1 := rawSecret(t, s, "a")
	mustSet(t, s, key, "a", value)
	n2, c2 := rawSecret(t, s, "a")
	mustSet(t, s, key, "b", value)
	n3, c3 := rawSecret(t, s, "b")

	if len(n1) != 12 {
		t.Errorf("nonce is %d bytes, want 12", len(n1))
	}
	if bytes.Equal(n1, n2) || bytes.Equal(n1, n3) || bytes.Equal(n2, n3) {
		t.Error("a nonce was reused")
	}
	if bytes.Equal(c1, c2) || bytes.Equal(c1, c3) || bytes.Equal(c2, c3) {
		t.Error("the same value gave the same ciphertext twice")
	}
	if bytes.Contains(c1, value) {
		t.Error("ciphertext contains the plaintext")
	}
}

func TestSecretWrongKey(t *testing.T) {
	s := openTest(t)
	mustSet(t, s, testKey(1), "a", []byte("v"))
	_, err := s.GetSecret(context.Background(), testKey(2), "a")
	if !errors.Is(err, ErrDecrypt) {
		t.Errorf("GetSecret with wrong key = %v, want ErrDecrypt", err)
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalid) {
		t.Errorf("wrong-key error %v wraps another sentinel", err)
	}
}

func TestSecretCiphertextBoundToName(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	key := testKey(1)
	mustSet(t, s, key, "alpha", []byte("alpha value"))
	mustSet(t, s, key, "beta", []byte("beta value"))

	na, ca := rawSecret(t, s, "alpha")
	nb, cb := rawSecret(t, s, "beta")
	swap := func(name string, nonce, ct []byte) {
		t.Helper()
		if _, err := s.wdb.Exec(`UPDATE secrets SET nonce = ?, ciphertext = ? WHERE name = ?`, nonce, ct, name); err != nil {
			t.Fatal(err)
		}
	}
	swap("alpha", nb, cb)
	swap("beta", na, ca)
	for _, name := range []string{"alpha", "beta"} {
		if v, err := s.GetSecret(ctx, key, name); !errors.Is(err, ErrDecrypt) {
			t.Errorf("GetSecret(%q) after swap = %q, %v; want ErrDecrypt", name, v, err)
		}
	}

	// Tampering with one bit of the ciphertext, or a truncated nonce, fails too.
	swap("alpha", na, append([]byte{ca[0] ^ 1}, ca[1:]...))
	if _, err := s.GetSecret(ctx, key, "alpha"); !errors.Is(err, ErrDecrypt) {
		t.Errorf("tampered ciphertext: %v, want ErrDecrypt", err)
	}
	swap("alpha", na[:8], ca)
	if _, err := s.GetSecret(ctx, key, "alpha"); !errors.Is(err, ErrDecrypt) {
		t.Errorf("short nonce: %v, want ErrDecrypt", err)
	}
	// Put back, it opens again.
	swap("alpha", na, ca)
	if got := mustGet(t, s, key, "alpha"); string(got) != "alpha value" {
		t.Errorf("restored alpha = %q", got)
	}
}

func TestRotateSecretsKey(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	oldKey, newKey := testKey(1), testKey(2)
	want := map[string]string{"a": "value a", "b": "value b", "c": `{"fields":{"api_key":"k"}}`}
	for n, v := range want {
		mustSet(t, s, oldKey, n, []byte(v))
	}
	before := map[string][]byte{}
	for n := range want {
		nonce, _ := rawSecret(t, s, n)
		before[n] = nonce
	}
	infoBefore, err := s.ListSecrets(ctx)
	if err != nil {
		t.Fatal(err)
	}

	if err := s.RotateSecretsKey(ctx, oldKey, newKey); err != nil {
		t.Fatalf("RotateSecretsKey: %v", err)
	}
	for n, v := range want {
		if got := mustGet(t, s, newKey, n); string(got) != v {
			t.Errorf("%s under new key = %q, want %q", n, got, v)
		}
		if _, err := s.GetSecret(ctx, oldKey, n); !errors.Is(err, ErrDecrypt) {
			t.Errorf("%s under old key = %v, want ErrDecrypt", n, err)
		}
		if nonce, _ := rawSecret(t, s, n); bytes.Equal(nonce, before[n]) {
			t.Errorf("%s kept its nonce across rotation", n)
		}
	}
	infoAfter, err := s.ListSecrets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(infoBefore, infoAfter) {
		t.Errorf("rotation changed times: %v -> %v", infoBefore, infoAfter)
	}

	// Rotating an empty store is fine.
	e := openTest(t)
	if err := e.RotateSecretsKey(ctx, oldKey, newKey); err != nil {
		t.Errorf("rotate empty store: %v", err)
	}
}

func TestRotateSecretsKeyAllOrNothing(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	keyA, keyB, keyC := testKey(1), testKey(2), testKey(3)
	// "a" and "b" sort before "z", so they would be rewritten before the
	// rotation reaches the secret sealed under another key.
	mustSet(t, s, keyA, "a", []byte("va"))
	mustSet(t, s, keyA, "b", []byte("vb"))
	mustSet(t, s, keyB, "z", []byte("vz"))

	snapshot := func() map[string][2][]byte {
		m := map[string][2][]byte{}
		for _, n := range []string{"a", "b", "z"} {
			nonce, ct := rawSecret(t, s, n)
			m[n] = [2][]byte{nonce, ct}
		}
		return m
	}
	before := snapshot()

	// Wrong old key for everything.
	if err := s.RotateSecretsKey(ctx, keyC, keyB); !errors.Is(err, ErrDecrypt) {
		t.Errorf("rotate with wrong old key = %v, want ErrDecrypt", err)
	}
	// Right old key for some, not for "z".
	err := s.RotateSecretsKey(ctx, keyA, keyC)
	if !errors.Is(err, ErrDecrypt) || !strings.Contains(err.Error(), `"z"`) {
		t.Errorf("partial rotate = %v, want ErrDecrypt naming z", err)
	}
	if after := snapshot(); !reflect.DeepEqual(before, after) {
		t.Error("a failed rotation changed stored secrets")
	}
	if got := mustGet(t, s, keyA, "a"); string(got) != "va" {
		t.Errorf("a = %q after failed rotation", got)
	}
	if got := mustGet(t, s, keyB, "z"); string(got) != "vz" {
		t.Errorf("z = %q after failed rotation", got)
	}
	if _, err := s.GetSecret(ctx, keyC, "a"); !errors.Is(err, ErrDecrypt) {
		t.Errorf("a opens with the new key after a failed rotation: %v", err)
	}

	// A cancelled context aborts without changes too.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.RotateSecretsKey(cctx, keyA, keyC); err == nil {
		t.Error("rotation with a cancelled context succeeded")
	}
	if after := snapshot(); !reflect.DeepEqual(before, after) {
		t.Error("a cancelled rotation changed stored secrets")
	}
}

func TestListSecretsNoValues(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	clock := t0
	s.now = func() time.Time { return clock }

	if list, err := s.ListSecrets(ctx); err != nil || list == nil || len(list) != 0 {
		t.Errorf("empty ListSecrets = %#v, %v; want empty non-nil", list, err)
	}

	key := testKey(1)
	mustSet(t, s, key, "zeta", []byte("zeta-plaintext-value"))
	mustSet(t, s, key, "alpha", []byte("alpha-plaintext-value"))
	clock = t0.Add(time.Hour)
	mustSet(t, s, key, "zeta", []byte("zeta-plaintext-value-2"))

	list, err := s.ListSecrets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []SecretInfo{
		{Name: "alpha", CreatedAt: t0, UpdatedAt: t0},
		{Name: "zeta", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour)},
	}
	if !reflect.DeepEqual(list, want) {
		t.Errorf("ListSecrets = %v, want %v", list, want)
	}

	// SecretInfo has no place for a value, and its JSON carries none.
	if n := reflect.TypeFor[SecretInfo]().NumField(); n != 3 {
		t.Errorf("SecretInfo has %d fields, want 3 (name and times only)", n)
	}
	js, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(js, []byte("plaintext")) {
		t.Errorf("ListSecrets JSON holds a value: %s", js)
	}
	var keys []map[string]any
	if err := json.Unmarshal(js, &keys); err != nil {
		t.Fatal(err)
	}
	for k := range keys[0] {
		if k != "name" && k != "created_at" && k != "updated_at" {
			t.Errorf("unexpected JSON field %q", k)
		}
	}
}

// TestSecretPlaintextNotOnDisk writes secrets and checks that neither the
// database file nor its WAL holds their plaintext, while the store is open
// and after Close has checkpointed.
func TestSecretPlaintextNotOnDisk(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	key := testKey(9)

	plain := []string{
		"sk-PLAINTEXT-MARKER-0123456789abcdef",
		"https://PLAINTEXT-BASE-URL.example.com/v1",
		"PLAINTEXT-ENTRY-KEY-fedcba9876543210",
	}
	service := `{"fields":{"api_key":"` + plain[0] + `","base_url":"` + plain[1] + `"},` +
		`"entries":[{"label":"second","fields":{"api_key":"` + plain[2] + `"}}]}`
	mustSet(t, s, key, "weather", []byte(service))
	mustSet(t, s, key, "token", []byte(plain[0]))
	mustSet(t, s, key, "token", []byte(plain[2])) // an update
	mustSet(t, s, key, "gone", []byte(plain[1]))
	if err := s.DeleteSecret(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.RotateSecretsKey(ctx, key, testKey(10)); err != nil {
		t.Fatal(err)
	}

	files := []string{s.Path(), s.Path() + "-wal"}
	check := func(when string) {
		t.Helper()
		sawData := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > 0 {
				sawData = true
			}
			for _, p := range plain {
				if bytes.Contains(b, []byte(p)) {
					t.Errorf("%s: %s holds plaintext %q", when, f, p)
				}
			}
			if bytes.Contains(b, []byte("PLAINTEXT")) {
				t.Errorf("%s: %s holds a plaintext marker", when, f)
			}
		}
		if !sawData {
			t.Fatalf("%s: no database data found to check", when)
		}
	}
	// The WAL holds the writes while the store is open.
	if fi, err := os.Stat(s.Path() + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("expected a non-empty WAL while open: %v", err)
	}
	check("open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed")

	// The names are not secret and are stored in the clear, which shows the
	// scan reads the right files.
	b, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("weather")) {
		t.Error("database file does not hold the secret name; is the scan looking at the right file?")
	}
}
