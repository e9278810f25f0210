package catalog

import (
	"context"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
)

// A tool an agent made counts against its worker's cap before the caller
// adopts it, so a second create cannot slip in between; one deleted
// before its adoption makes room again. Versions stop at the cap for an
// agent, not for a person.
func TestAgentCaps(t *testing.T) {
	c := openCatalog(t, WithAgentCaps(1, 2))
	ctx := context.Background()
	agent := principal.Caller{Type: principal.TypeLLM, ID: "worker:w", Worker: "w", TokenID: "t"}
	person := principal.Caller{Type: principal.TypeUser, ID: "uid:0"}
	if _, err := c.Create(ctx, agentDef(t, "one", "js", nil, nil), agent); err != nil {
		t.Fatal(err)
	}
	_, err := c.Create(ctx, agentDef(t, "two", "js", nil, nil), agent)
	if codeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitTools {
		t.Fatalf("a second tool before the first was adopted: %v", err)
	}
	if _, err := c.Create(ctx, agentDef(t, "persons", "js", nil, nil), person); err != nil {
		t.Fatalf("the person's tool: %v", err)
	}
	if err := c.Delete(ctx, "one", agent, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, agentDef(t, "two", "js", nil, nil), agent); err != nil {
		t.Fatalf("after the unadopted tool was deleted: %v", err)
	}
	next := agentDef(t, "two", "js", nil, nil)
	next.Description = "v2"
	if _, err := c.Update(ctx, "two", next, agent); err != nil {
		t.Fatalf("version 2: %v", err)
	}
	next = agentDef(t, "two", "js", nil, nil)
	next.Description = "v3"
	if _, err := c.Update(ctx, "two", next, agent); codeOf(err) != errdefs.LimitExceeded {
		t.Fatalf("version 3 by the agent: %v", err)
	}
	if _, err := c.Update(ctx, "two", next, person); err != nil {
		t.Fatalf("version 3 by the person: %v", err)
	}
}
