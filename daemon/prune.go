package daemon

import (
	"context"
	"time"

	"github.com/toolcage/toolcage/store"
)

// pruneAudit deletes audit records older than the retention, at once and
// then every pruneEvery, until ctx ends. Each batch is a short write of its
// own with a pause after it, so calls recording their own records meanwhile
// wait for one batch at most.
func (d *Daemon) pruneAudit(ctx context.Context) {
	keep := d.cfg.Audit.Retention
	if keep <= 0 {
		return
	}
	every := min(max(keep/24, time.Minute), 10*time.Minute)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d.pruneOnce(ctx, time.Now().Add(-keep))
		t.Reset(every)
	}
}

// pruneBatchPause is the pause between two prune batches.
const pruneBatchPause = 5 * time.Millisecond

func (d *Daemon) pruneOnce(ctx context.Context, before time.Time) {
	for _, p := range []struct {
		what  string
		prune func(context.Context, time.Time, int) (int, error)
	}{{"calls", d.store.PruneExecutions}, {"admin acts", d.store.PruneAdminActs}} {
		total := 0
		for {
			if gate := d.cfg.Audit.BatchGate; gate != nil {
				select {
				case <-gate:
				case <-ctx.Done():
					return
				}
			}
			n, err := p.prune(ctx, before, store.PruneBatch)
			total += n
			if err != nil {
				if ctx.Err() == nil {
					d.log.Warn("audit retention: pruning failed; trying again later", "what", p.what, "err", err)
				}
				break
			}
			if n < store.PruneBatch {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(pruneBatchPause):
			}
		}
		if total > 0 {
			d.log.Info("audit retention: pruned old records", "what", p.what, "records", total, "before", before.UTC().Format(time.RFC3339))
			d.metrics.auditPruned.Add(float64(total))
		}
	}
}
