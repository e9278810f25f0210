package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// catalogOptions are the catalog's rules for tools agents make: the
// config's agents.always_pending and each worker's secret grant.
func (d *Daemon) catalogOptions(st *store.Store) []catalog.Option {
	return []catalog.Option{
		catalog.WithAlwaysPending(d.cfg.Agents.AlwaysPending),
		catalog.WithAgentRules(func(ctx context.Context, c principal.Caller) (catalog.AgentRules, error) {
			return agentRules(ctx, st, c)
		}),
	}
}

// agentRules reads the rules of the caller's worker from its last good
// definition in the store. A caller with no worker, or naming one that is
// not registered, gets no grant: its tools may name no secret.
//
// Seam for the worker registry (issue #10 part A): once the daemon keeps
// parsed workers in memory, look the worker up there instead.
func agentRules(ctx context.Context, st *store.Store, c principal.Caller) (catalog.AgentRules, error) {
	if c.Worker == "" {
		return catalog.AgentRules{}, nil
	}
	w, err := st.GetWorker(ctx, c.Worker)
	if errors.Is(err, store.ErrNotFound) {
		return catalog.AgentRules{}, nil
	}
	if err != nil {
		return catalog.AgentRules{}, err
	}
	var def worker.Worker
	if err := json.Unmarshal(w.Definition, &def); err != nil {
		return catalog.AgentRules{}, fmt.Errorf("worker %q: stored definition: %w", c.Worker, err)
	}
	return catalog.AgentRules{Secrets: def.Secrets}, nil
}
