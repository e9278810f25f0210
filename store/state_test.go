package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWorkerState(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	registerTest(t, s, "a")
	registerTest(t, s, "b")
	lim := StateLimits{}

	if _, err := s.GetState(ctx, "a", "k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unset key: %v", err)
	}
	if err := s.SetState(ctx, "a", "k", json.RawMessage(`{ "n" : 1 }`), lim); err != nil {
		t.Fatal(err)
	}
	e, err := s.GetState(ctx, "a", "k")
	if err != nil || string(e.Value) != `{"n":1}` || e.UpdatedAt.IsZero() {
		t.Fatalf("get = %+v, %v", e, err)
	}
	// Workers do not see each other's state.
	if _, err := s.GetState(ctx, "b", "k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("b sees a's key: %v", err)
	}
	if err := s.SetState(ctx, "a", "k", json.RawMessage(`"two"`), lim); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.GetState(ctx, "a", "k"); string(e.Value) != `"two"` {
		t.Fatalf("overwrite: %s", e.Value)
	}
	for _, k := range []string{"user:1", "user:2", "user%", "user_x", "users", "zed"} {
		if err := s.SetState(ctx, "a", k, json.RawMessage(`true`), lim); err != nil {
			t.Fatal(err)
		}
	}
	for prefix, want := range map[string][]string{
		"":      {"k", "user%", "user:1", "user:2", "user_x", "users", "zed"},
		"user:": {"user:1", "user:2"},
		"user%": {"user%"}, // % and _ mean themselves
		"user_": {"user_x"},
		"q":     {},
	} {
		got, err := s.ListStateKeys(ctx, "a", prefix, 0)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("list %q = %v, %v; want %v", prefix, got, err, want)
		}
	}
	if got, _ := s.ListStateKeys(ctx, "a", "user", 2); len(got) != 2 {
		t.Errorf("limit 2: %v", got)
	}
	if ok, err := s.DeleteState(ctx, "a", "zed"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ok, _ := s.DeleteState(ctx, "a", "zed"); ok {
		t.Fatal("deleted twice")
	}
	snap, err := s.StateSnapshot(ctx, "a")
	if err != nil || len(snap) != 6 || string(snap["k"]) != `"two"` {
		t.Fatalf("snapshot %v %v", snap, err)
	}
	// A worker that is not registered has no state to write.
	if err := s.SetState(ctx, "ghost", "k", json.RawMessage(`1`), lim); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown worker: %v", err)
	}
}

// Each cap holds at its edge: the largest key, value and count pass, one
// more does not, and a refused batch leaves nothing behind.
func TestWorkerStateCaps(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	registerTest(t, s, "a")
	lim := StateLimits{MaxKeyBytes: 8, MaxValueBytes: 10, MaxKeys: 3}

	if err := s.SetState(ctx, "a", strings.Repeat("k", 8), json.RawMessage(`1`), lim); err != nil {
		t.Fatalf("8-byte key: %v", err)
	}
	if err := s.SetState(ctx, "a", strings.Repeat("k", 9), json.RawMessage(`1`), lim); !errors.Is(err, ErrLimit) {
		t.Fatalf("9-byte key: %v", err)
	}
	if err := s.SetState(ctx, "a", "v", json.RawMessage(`"12345678"`), lim); err != nil { // 10 bytes
		t.Fatalf("10-byte value: %v", err)
	}
	if err := s.SetState(ctx, "a", "v", json.RawMessage(`"123456789"`), lim); !errors.Is(err, ErrLimit) {
		t.Fatalf("11-byte value: %v", err)
	}
	// Compacted before it is measured.
	if err := s.SetState(ctx, "a", "v", json.RawMessage(`[ 1 , 2 , 3 ,  4 ]`), lim); err != nil {
		t.Fatalf("spaced value: %v", err)
	}
	if err := s.SetState(ctx, "a", "third", json.RawMessage(`3`), lim); err != nil {
		t.Fatalf("third key: %v", err)
	}
	if err := s.SetState(ctx, "a", "fourth", json.RawMessage(`4`), lim); !errors.Is(err, ErrLimit) {
		t.Fatalf("fourth key: %v", err)
	}
	// At the cap, a key may still change, and a batch that frees one
	// first may add one.
	if err := s.SetState(ctx, "a", "third", json.RawMessage(`33`), lim); err != nil {
		t.Fatalf("overwrite at the cap: %v", err)
	}
	if err := s.ApplyState(ctx, "a", []StateChange{{Key: "third"}, {Key: "fourth", Value: json.RawMessage(`4`)}}, lim); err != nil {
		t.Fatalf("delete then add: %v", err)
	}
	err := s.ApplyState(ctx, "a", []StateChange{{Key: "fourth"}, {Key: "x", Value: json.RawMessage(`1`)}, {Key: "y", Value: json.RawMessage(`1`)}}, lim)
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("batch over the cap: %v", err)
	}
	if _, err := s.GetState(ctx, "a", "fourth"); err != nil {
		t.Fatalf("a refused batch deleted a key: %v", err)
	}
	for _, bad := range []string{"", "a\nb", "\x00", string([]byte{0xff})} {
		if err := s.SetState(ctx, "a", bad, json.RawMessage(`1`), StateLimits{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("key %q: %v", bad, err)
		}
	}
	if err := s.SetState(ctx, "a", "j", json.RawMessage(`{nope`), lim); !errors.Is(err, ErrInvalid) {
		t.Errorf("not JSON: %v", err)
	}
	// The defaults: 1,000 keys.
	s2 := openTest(t)
	registerTest(t, s2, "d")
	changes := make([]StateChange, DefaultStateKeys)
	for i := range changes {
		changes[i] = StateChange{Key: fmt.Sprint("k", i), Value: json.RawMessage(`0`)}
	}
	if err := s2.ApplyState(ctx, "d", changes, StateLimits{}); err != nil {
		t.Fatalf("1,000 keys: %v", err)
	}
	if err := s2.SetState(ctx, "d", "one_more", json.RawMessage(`0`), StateLimits{}); !errors.Is(err, ErrLimit) {
		t.Fatalf("key 1,001: %v", err)
	}
}

// State lives in the store file: it is there after the store is closed
// and opened again, and goes with its worker.
func TestWorkerStateSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "toolcage.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	registerTest(t, s, "a")
	if err := s.SetState(ctx, "a", "k", json.RawMessage(`[1,2]`), StateLimits{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if e, err := s.GetState(ctx, "a", "k"); err != nil || string(e.Value) != `[1,2]` {
		t.Fatalf("after reopen: %+v %v", e, err)
	}
	if err := s.DeleteWorker(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if snap, _ := s.StateSnapshot(ctx, "a"); len(snap) != 0 {
		t.Fatalf("state outlived its worker: %v", snap)
	}
}
