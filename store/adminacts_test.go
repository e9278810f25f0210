package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestAdminActs(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	acts := []*AdminAct{
		{Act: "secret.set", Target: "api_key", CallerID: "uid:1000", CallerType: "user", Outcome: ActOK, At: t0},
		{Act: "secret.list", CallerID: "worker:ops", CallerType: "llm", Worker: "ops", TokenID: "abcdefgh", Session: "s1",
			Outcome: ActRefused, ErrorCode: "forbidden", Error: "only a person may list secrets", At: t0.Add(time.Second)},
	}
	for _, a := range acts {
		if err := s.RecordAdminAct(ctx, a); err != nil {
			t.Fatal(err)
		}
		if a.ID == "" {
			t.Fatal("no id set")
		}
	}
	got, err := s.ListAdminActs(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0], acts[1]) || !reflect.DeepEqual(got[1], acts[0]) {
		t.Fatalf("list: %+v %+v", got[0], got[1])
	}
	if got, _ := s.ListAdminActs(ctx, 1, 1); len(got) != 1 || got[0].ID != acts[0].ID {
		t.Fatalf("paged: %+v", got)
	}
	for _, bad := range []*AdminAct{{Outcome: ActOK}, {Act: "x"}} {
		if err := s.RecordAdminAct(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if err := s.RecordAdminAct(ctx, &AdminAct{ID: acts[0].ID, Act: "x", Outcome: ActOK}); !errors.Is(err, ErrConflict) {
		t.Errorf("duplicate id: %v", err)
	}
}
