package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var tokenRE = regexp.MustCompile(`^tcw_[a-z2-7]{52}$`)

func registerTest(t *testing.T, s *Store, name string) (token, id string) {
	t.Helper()
	token, id, err := s.RegisterWorker(context.Background(), &Worker{
		Name: name, Path: "/etc/toolcage/workers/" + name + ".yaml",
		Definition: json.RawMessage(`{ "name": "` + name + `", "tools": ["dns_lookup"] }`),
	})
	if err != nil {
		t.Fatalf("RegisterWorker(%s): %v", name, err)
	}
	return token, id
}

func wantAuth(t *testing.T, s *Store, token, worker, id string) {
	t.Helper()
	w, gotID, err := s.Authenticate(context.Background(), token)
	if err != nil || w != worker || gotID != id {
		t.Fatalf("Authenticate = %q, %q, %v; want %q, %q", w, gotID, err, worker, id)
	}
}

func wantRefused(t *testing.T, s *Store, token string) {
	t.Helper()
	w, id, err := s.Authenticate(context.Background(), token)
	if !errors.Is(err, ErrInvalidToken) || w != "" || id != "" {
		t.Fatalf("Authenticate(%q) = %q, %q, %v; want ErrInvalidToken", token, w, id, err)
	}
}

func TestWorkerRegisterAndAuthenticate(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	token, id := registerTest(t, s, "ops")
	if !tokenRE.MatchString(token) {
		t.Errorf("token %q does not look like tcw_ + 52 base32 characters", token)
	}
	if !regexp.MustCompile(`^[a-z2-7]{8}$`).MatchString(id) {
		t.Errorf("token id %q", id)
	}
	wantAuth(t, s, token, "ops", id)

	w, err := s.GetWorker(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if w.Path != "/etc/toolcage/workers/ops.yaml" || string(w.Definition) != `{"name":"ops","tools":["dns_lookup"]}` ||
		w.CreatedAt.IsZero() || !w.UpdatedAt.Equal(w.CreatedAt) {
		t.Errorf("GetWorker = %+v", w)
	}

	// Only the hash is stored.
	var hash []byte
	if err := s.rdb.QueryRow(`SELECT hash FROM worker_tokens WHERE id = ?`, id).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(token)); !bytes.Equal(hash, sum[:]) {
		t.Errorf("stored hash %x, want sha256 of the token", hash)
	}
	if err := s.Close(); err != nil { // checkpoint: everything is in the main file
		t.Fatal(err)
	}
	secret := strings.TrimPrefix(token, TokenPrefix)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		data, err := os.ReadFile(s.Path() + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the token is in %s in the clear", filepath.Base(s.Path()+suffix))
		}
	}

	// Tokens and workers survive a reopen.
	s2, err := Open(ctx, s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	wantAuth(t, s2, token, "ops", id)
}

func TestWorkerTokensAreDistinct(t *testing.T) {
	s := openTest(t)
	seen := map[string]bool{}
	for _, name := range []string{"a", "b", "c", "d"} {
		token, id := registerTest(t, s, name)
		if seen[token] || seen[id] {
			t.Fatalf("token or id repeated: %s %s", token, id)
		}
		seen[token], seen[id] = true, true
		wantAuth(t, s, token, name, id)
	}
}

func TestAuthenticateRefusesMalformed(t *testing.T) {
	s := openTest(t)
	token, _ := registerTest(t, s, "ops")
	for _, bad := range []string{
		"", "tcw_", TokenPrefix + strings.Repeat("a", 52), strings.ToUpper(token), token + "a", token[:len(token)-1],
		"Bearer " + token, " " + token, "tcx_" + token[4:], token[:len(token)-1] + "\x00",
	} {
		wantRefused(t, s, bad)
	}
}

func TestWorkerTokenRotate(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	old, oldID := registerTest(t, s, "ops")
	extra, extraID, err := s.IssueWorkerToken(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	wantAuth(t, s, old, "ops", oldID)
	wantAuth(t, s, extra, "ops", extraID)

	fresh, freshID, err := s.RotateWorkerToken(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	// The old tokens are refused at once, the new one works.
	wantRefused(t, s, old)
	wantRefused(t, s, extra)
	wantAuth(t, s, fresh, "ops", freshID)

	list, err := s.ListWorkerTokens(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("tokens %+v", list)
	}
	for _, tok := range list {
		if revoked := !tok.RevokedAt.IsZero(); revoked != (tok.ID != freshID) || tok.Worker != "ops" {
			t.Errorf("token %+v after rotation", tok)
		}
	}
	b, _ := json.Marshal(list)
	for _, secret := range []string{old, extra, fresh} {
		if bytes.Contains(b, []byte(secret[len(TokenPrefix):])) {
			t.Errorf("ListWorkerTokens shows a secret: %s", b)
		}
	}
}

func TestWorkerTokenRevoke(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	first, firstID := registerTest(t, s, "ops")
	second, secondID, err := s.IssueWorkerToken(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	other, otherID := registerTest(t, s, "web")

	if err := s.RevokeWorkerToken(ctx, firstID); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, s, first)
	wantAuth(t, s, second, "ops", secondID)
	if err := s.RevokeWorkerToken(ctx, firstID); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoking a revoked token: %v, want ErrNotFound", err)
	}

	n, err := s.RevokeWorkerTokens(ctx, "ops")
	if err != nil || n != 1 {
		t.Fatalf("RevokeWorkerTokens = %d, %v; want 1", n, err)
	}
	wantRefused(t, s, second)
	wantAuth(t, s, other, "web", otherID) // another worker's token is untouched
	if _, err := s.GetWorker(ctx, "ops"); err != nil {
		t.Errorf("revoking tokens removed the worker: %v", err)
	}
	// A new token after revocation works.
	again, againID, err := s.IssueWorkerToken(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	wantAuth(t, s, again, "ops", againID)
}

func TestWorkerRemove(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	token, _ := registerTest(t, s, "ops")
	if err := s.DeleteWorker(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, s, token)
	if _, err := s.GetWorker(ctx, "ops"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetWorker after delete: %v", err)
	}
	var n int
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM worker_tokens`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d tokens left (%v)", n, err)
	}
	if err := s.DeleteWorker(ctx, "ops"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	// The name can be registered again, with a new token.
	token2, id2 := registerTest(t, s, "ops")
	wantRefused(t, s, token)
	wantAuth(t, s, token2, "ops", id2)
}

// A removed worker's approvals end with it: the one allowed and not used,
// and the pending one; another worker's stay as they were.
func TestWorkerRemoveRetiresItsApprovals(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	registerTest(t, s, "ops")
	registerTest(t, s, "web")
	for _, a := range []*Approval{
		{ID: "aaaa2345", Tool: "t", Version: 1, DefHash: "d", ArgsHash: "h", CallerID: "worker:ops", CallerType: "llm", Worker: "ops"},
		{ID: "bbbb2345", Tool: "t", Version: 1, DefHash: "d", ArgsHash: "h", CallerID: "worker:ops", CallerType: "llm", Worker: "ops"},
		{ID: "cccc2345", Tool: "t", Version: 1, DefHash: "d", ArgsHash: "h", CallerID: "worker:web", CallerType: "llm", Worker: "web"},
	} {
		if err := s.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"aaaa2345", "cccc2345"} {
		if _, err := s.DecideApproval(ctx, id, ApprovalAllowed, "uid:1"); err != nil {
			t.Fatal(err)
		}
	}
	always := func(w string) AlwaysKey {
		return AlwaysKey{Tool: "t", Worker: w, DefHash: "d", ArgsHash: "h2", Version: 1}
	}
	for _, w := range []string{"ops", "web"} {
		if err := s.AddAlwaysApproval(ctx, always(w)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteWorker(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	for w, want := range map[string]bool{"ops": false, "web": true} {
		if ok, err := s.HasAlwaysApproval(ctx, always(w)); ok != want || err != nil {
			t.Errorf("%s's approval for good after ops went: %v %v, want %v", w, ok, err, want)
		}
	}
	registerTest(t, s, "ops")
	call := ApprovedCall{Tool: "t", Version: 1, DefHash: "d", CallerID: "worker:ops", CallerType: "llm", Worker: "ops", ArgsHash: "h"}
	if a, err := s.UseAllowedApproval(ctx, call, time.Now().Add(-time.Hour)); a != nil || err != nil {
		t.Errorf("the new ops used the removed one's approval: %+v %v", a, err)
	}
	if a, _ := s.GetApproval(ctx, "bbbb2345"); a.Status != ApprovalExpired || a.DecidedBy != DecidedByWorkerGone {
		t.Errorf("the removed worker's pending approval: %+v", a)
	}
	call.CallerID, call.Worker = "worker:web", "web"
	if a, err := s.UseAllowedApproval(ctx, call, time.Now().Add(-time.Hour)); a == nil || err != nil {
		t.Errorf("web's approval: %+v %v", a, err)
	}
}

func TestWorkerErrors(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	registerTest(t, s, "ops")
	if _, _, err := s.RegisterWorker(ctx, &Worker{Name: "ops", Path: "/x", Definition: json.RawMessage(`{}`)}); !errors.Is(err, ErrConflict) {
		t.Errorf("duplicate: %v, want ErrConflict", err)
	}
	for _, w := range []*Worker{
		{Path: "/x", Definition: json.RawMessage(`{}`)},
		{Name: "x", Definition: json.RawMessage(`{}`)},
		{Name: "x", Path: "/x"},
		{Name: "x", Path: "/x", Definition: json.RawMessage(`{`)},
		{Name: "x", Path: "/x", Definition: json.RawMessage(`{} {}`)},
	} {
		if _, _, err := s.RegisterWorker(ctx, w); !errors.Is(err, ErrInvalid) {
			t.Errorf("RegisterWorker(%+v): %v, want ErrInvalid", w, err)
		}
	}
	// A refused registration leaves no token behind.
	var n int
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM worker_tokens`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d tokens (%v), want 1", n, err)
	}
	if _, _, err := s.IssueWorkerToken(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("issue for unknown: %v", err)
	}
	if _, _, err := s.RotateWorkerToken(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("rotate for unknown: %v", err)
	}
	if _, err := s.RevokeWorkerTokens(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoke for unknown: %v", err)
	}
	if err := s.UpdateWorker(ctx, "nobody", json.RawMessage(`{}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("update unknown: %v", err)
	}
	if err := s.UpdateWorker(ctx, "ops", json.RawMessage(`nope`)); !errors.Is(err, ErrInvalid) {
		t.Errorf("update with bad JSON: %v", err)
	}
}

func TestWorkerUpdateAndList(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	registerTest(t, s, "web")
	registerTest(t, s, "data")
	before, _ := s.GetWorker(ctx, "web")
	if err := s.UpdateWorker(ctx, "web", json.RawMessage(`{"name": "web", "tools": ["weather"]}`)); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListWorkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "data" || list[1].Name != "web" {
		t.Fatalf("ListWorkers = %+v", list)
	}
	if got := string(list[1].Definition); got != `{"name":"web","tools":["weather"]}` {
		t.Errorf("definition after update %s", got)
	}
	if list[1].UpdatedAt.Before(before.UpdatedAt) || !list[1].CreatedAt.Equal(before.CreatedAt) {
		t.Errorf("times after update: %+v, before %+v", list[1], before)
	}
	empty := openTest(t)
	if l, err := empty.ListWorkers(ctx); err != nil || l == nil || len(l) != 0 {
		t.Errorf("empty ListWorkers = %#v, %v", l, err)
	}
}

// FuzzAuthenticate checks the token check on arbitrary input: it never
// panics, refuses everything but the one issued token with
// ErrInvalidToken, and accepts that token.
func FuzzAuthenticate(f *testing.F) {
	s := openTest(f)
	revoked, _, err := s.RegisterWorker(context.Background(), &Worker{Name: "ops", Path: "/w.yaml", Definition: json.RawMessage(`{}`)})
	if err != nil {
		f.Fatal(err)
	}
	revoked2, _, err := s.IssueWorkerToken(context.Background(), "ops")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := s.RevokeWorkerTokens(context.Background(), "ops"); err != nil {
		f.Fatal(err)
	}
	token, id, err := s.IssueWorkerToken(context.Background(), "ops")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{token, revoked, revoked2, "", TokenPrefix, token[:len(token)-1] + "a", strings.ToUpper(token), token + "\n", "tcw_" + strings.Repeat("\xff", 52)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		w, gotID, err := s.Authenticate(context.Background(), in)
		if in == token {
			if err != nil || w != "ops" || gotID != id {
				t.Fatalf("the valid token: %q, %q, %v", w, gotID, err)
			}
			return
		}
		if !errors.Is(err, ErrInvalidToken) || w != "" || gotID != "" {
			t.Fatalf("Authenticate(%q) = %q, %q, %v; want ErrInvalidToken", in, w, gotID, err)
		}
	})
}

func BenchmarkAuthenticate(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	token, _, err := s.RegisterWorker(ctx, &Worker{Name: "ops", Path: "/w.yaml", Definition: json.RawMessage(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := s.Authenticate(ctx, token); err != nil {
			b.Fatal(err)
		}
	}
}

func TestWorkerTools(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	registerTest(t, s, "ops")
	registerTest(t, s, "data")
	for _, tool := range []string{"b_tool", "a_tool", "b_tool"} {
		if err := s.AddWorkerTool(ctx, "ops", tool); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.WorkerTools(ctx, "ops"); err != nil || !slices.Equal(got, []string{"a_tool", "b_tool"}) {
		t.Fatalf("ops tools: %v %v", got, err)
	}
	if got, err := s.WorkerTools(ctx, "data"); err != nil || len(got) != 0 {
		t.Fatalf("data tools: %v %v", got, err)
	}
	if err := s.AddWorkerTool(ctx, "ghost", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown worker: %v", err)
	}
	// They go with their worker.
	if err := s.DeleteWorker(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	registerTest(t, s, "ops")
	if got, err := s.WorkerTools(ctx, "ops"); err != nil || len(got) != 0 {
		t.Fatalf("tools outlived their worker: %v %v", got, err)
	}
}
