package daemon

import (
	"context"
	"errors"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// catalogOptions are the catalog's rules for tools agents make: the
// config's agents.always_pending and each worker's secret grant.
func (d *Daemon) catalogOptions() []catalog.Option {
	return []catalog.Option{
		catalog.WithAlwaysPending(d.cfg.Agents.AlwaysPending),
		catalog.WithAgentRules(d.agentRules),
		catalog.WithOnChange(d.changes.Publish),
	}
}

// agentRules reads the rules of the caller's worker from the registry
// (its last good definition). A caller with no worker, or naming one that
// is not registered, gets no grant: its tools may name no secret.
func (d *Daemon) agentRules(_ context.Context, c principal.Caller) (catalog.AgentRules, error) {
	if c.Worker == "" {
		return catalog.AgentRules{}, nil
	}
	w, err := d.workers.get(c.Worker)
	if errors.Is(err, store.ErrNotFound) {
		return catalog.AgentRules{}, nil
	}
	if err != nil {
		return catalog.AgentRules{}, err
	}
	return catalog.AgentRules{Secrets: w.Secrets}, nil
}
