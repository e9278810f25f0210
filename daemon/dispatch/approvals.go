package dispatch

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// The approval queue. A call of an `approval: ask` tool is validated and
// planned (so policy refusals come first), then, unless a person approved
// this exact call (tool, worker, definition, arguments) for good, it parks as a
// pending approval in the store and its caller waits for a decision:
// allowed runs it, denied or no decision within the approval timeout
// refuses it with approval_denied.
//
// An allowed approval is used once. When its caller is no longer waiting
// (it called with --no-wait, gave up, or the daemon restarted), the
// caller's retry of the identical call (same tool, version and definition,
// same caller and worker, same canonical arguments) within the approval's
// validity runs on it instead of parking again; a second retry, another
// caller or other arguments park anew. `allow --always` approves every
// identical call through the same worker (or through none) from then on.
//
// A tool is named by its definition's hash, not by its version alone:
// toolset and tool-file tools are always version 1, and two workers may
// each have a tool of one name. Editing a tool file (or a toolset's
// settings) gives another hash, which no earlier approval matches.

// ApprovalIDLen is the length of an approval id: 8 base32 characters (40
// random bits), short enough to type.
const ApprovalIDLen = 8

// minApprovalPrefix is the shortest id prefix allow and deny accept.
const minApprovalPrefix = 4

var approvalIDEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func newApprovalID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return approvalIDEncoding.EncodeToString(b[:])
}

// approvalQueue holds the callers waiting on a decision, by approval id.
type approvalQueue struct {
	timeout time.Duration
	// parkMu makes counting a worker's pending approvals and storing a
	// new one a single step (parkRoom).
	parkMu   sync.Mutex
	mu       sync.Mutex
	waiters  map[string]chan string
	stopping chan struct{}
	stopOnce sync.Once
}

func newApprovalQueue(timeout time.Duration) *approvalQueue {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	return &approvalQueue{timeout: timeout, waiters: map[string]chan string{}, stopping: make(chan struct{})}
}

func (q *approvalQueue) register(id string) chan string {
	ch := make(chan string, 1)
	q.mu.Lock()
	q.waiters[id] = ch
	q.mu.Unlock()
	return ch
}

func (q *approvalQueue) unregister(id string) {
	q.mu.Lock()
	delete(q.waiters, id)
	q.mu.Unlock()
}

// notify hands a decision to the caller waiting on id, if any.
func (q *approvalQueue) notify(id, status string) {
	q.mu.Lock()
	ch := q.waiters[id]
	q.mu.Unlock()
	if ch != nil {
		select {
		case ch <- status:
		default:
		}
	}
}

// stop ends every wait: the daemon is shutting down. The approvals stay
// pending in the store.
func (q *approvalQueue) stop() { q.stopOnce.Do(func() { close(q.stopping) }) }

// ApprovalError carries the id of the approval a refused call parked in.
type ApprovalError struct {
	ID  string
	Err error
}

func (e *ApprovalError) Error() string { return e.Err.Error() }
func (e *ApprovalError) Unwrap() error { return e.Err }

func approvalErrorf(id string, code errdefs.Code, format string, args ...any) error {
	return &ApprovalError{ID: id, Err: errdefs.Errorf(code, format, args...)}
}

// callAsk runs a call of an `approval: ask` tool once a person allows it.
func (d *Dispatcher) callAsk(ctx context.Context, c *call, res *catalog.Resolved) (*Outcome, error) {
	if err := d.validArgs(ctx, c, res); err != nil {
		return nil, err
	}
	// Planned first: a call policy refuses never reaches a person, and
	// what the person sees is what would run.
	p, err := d.plan(ctx, c, res)
	scr := p.scrubber(d)
	if err != nil {
		return nil, d.refuse(ctx, c, scr, err)
	}
	hash, err := store.ArgsHash(c.args)
	if err != nil {
		return nil, d.refuse(ctx, c, scr, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err})
	}
	if c.defHash, err = definitionHash(res.Tool.Def); err != nil {
		return nil, d.refuse(ctx, c, scr, err)
	}
	always, err := d.cfg.Store.HasAlwaysApproval(ctx, store.AlwaysKey{Tool: c.tool, Worker: c.caller.Worker, DefHash: c.defHash, ArgsHash: hash})
	if err != nil {
		return nil, d.refuse(ctx, c, scr, err)
	}
	if policy.Approval(c.approval, always) == policy.ApprovalRun {
		return d.execute(ctx, c, p)
	}
	if d.cfg.ApprovalValidity > 0 {
		exact := store.ApprovedCall{Tool: c.tool, Version: c.version, DefHash: c.defHash, CallerID: c.caller.ID, CallerType: c.caller.Type,
			Worker: c.caller.Worker, ArgsHash: hash}
		used, err := d.cfg.Store.UseAllowedApproval(ctx, exact, d.now().Add(-d.cfg.ApprovalValidity))
		if err != nil {
			return nil, d.refuse(ctx, c, scr, err)
		}
		if used != nil {
			d.log.Info("call runs on the approval a person gave its earlier attempt", "approval_id", used.ID, "tool", c.tool,
				"version", c.version, "caller_id", c.caller.ID, "call_id", c.id)
			return d.execute(ctx, c, p)
		}
	}
	q := d.approvals
	unlock, err := d.parkRoom(ctx, c)
	if err != nil {
		return nil, d.refuse(ctx, c, scr, err)
	}
	a := &store.Approval{Tool: c.tool, Version: c.version, CallerID: c.caller.ID, CallerType: c.caller.Type, Worker: c.caller.Worker,
		DefHash: c.defHash, ArgsHash: hash, Args: scrubJSON(scr, c.args), Rendered: renderedCall(p.req, scr)}
	if p.change != nil {
		// What a person approves is the change itself, as the file
		// stands when the call parks; scrubbed like the rest.
		a.Change = scr.Scrub(p.change())
	}
	var ch chan string
	for range 5 {
		a.ID = newApprovalID()
		// Waiting before the approval exists, so no decision is missed.
		ch = q.register(a.ID)
		if err = d.cfg.Store.CreateApproval(ctx, a); !errors.Is(err, store.ErrConflict) {
			break
		}
		q.unregister(a.ID)
	}
	unlock()
	if err != nil {
		q.unregister(a.ID)
		return nil, d.refuse(ctx, c, scr, err)
	}
	defer q.unregister(a.ID)
	d.log.Info("call waits for approval", "approval_id", a.ID, "tool", c.tool, "version", c.version, "caller_id", c.caller.ID)
	d.announce(a)
	if c.noWait {
		again := ""
		if d.cfg.ApprovalValidity > 0 {
			again = fmt.Sprintf("; once it is allowed, the same call again within %s runs", d.cfg.ApprovalValidity)
		}
		return nil, d.refuse(ctx, c, scr, approvalErrorf(a.ID, errdefs.ApprovalRequired,
			"tool %q needs a person's approval for each call; approval %s is pending (toolcage approvals allow %s)%s", c.tool, a.ID, a.ID, again))
	}
	if c.onWait != nil {
		c.onWait(a.ID)
	}
	timer := time.NewTimer(q.timeout)
	defer timer.Stop()
	var changed <-chan struct{} // nil (never ready) without a broadcaster
	if d.cfg.Changes != nil {
		var stop func()
		changed, stop = d.cfg.Changes.Subscribe()
		defer stop()
	}
	var status string
	for status == "" {
		select {
		case status = <-ch:
		case <-changed:
			// The tools changed: a call whose tool no longer runs as the
			// person would approve it ends now, and so does its approval.
			gone := d.stillRuns(ctx, c, a.ID)
			if gone == nil {
				continue
			}
			got, err := d.cfg.Store.DecideApproval(context.WithoutCancel(ctx), a.ID, store.ApprovalExpired, "tool changed")
			switch {
			case err == nil:
				d.announce(got)
				return nil, d.refuse(ctx, c, scr, gone)
			case errors.Is(err, store.ErrConflict) && got != nil:
				status = got.Status // decided just as the tool changed
			default:
				return nil, d.refuse(ctx, c, scr, err)
			}
		case <-timer.C:
			got, err := d.cfg.Store.DecideApproval(context.WithoutCancel(ctx), a.ID, store.ApprovalExpired, "timeout")
			switch {
			case err == nil:
				status = store.ApprovalExpired
				d.announce(got)
			case errors.Is(err, store.ErrConflict) && got != nil:
				status = got.Status // decided just as the wait ended
			default:
				return nil, d.refuse(ctx, c, scr, err)
			}
		case <-ctx.Done():
			return nil, d.refuse(ctx, c, scr, approvalErrorf(a.ID, errdefs.ApprovalRequired,
				"the caller stopped waiting for approval %s; it stays pending", a.ID))
		case <-q.stopping:
			return nil, d.refuse(ctx, c, scr, approvalErrorf(a.ID, errdefs.Unavailable,
				"the daemon is stopping; approval %s stays pending, and `toolcage approvals allow %s --always` approves the next identical call", a.ID, a.ID))
		}
	}
	switch status {
	case store.ApprovalAllowed:
		// The tool may have changed while the call waited: what runs is
		// what the person saw, and only if the tool still runs as such.
		if err := d.stillRuns(ctx, c, a.ID); err != nil {
			return nil, d.refuse(ctx, c, scr, err)
		}
		// Used once: by this call, unless a retry of it came first.
		ok, err := d.cfg.Store.MarkApprovalUsed(context.WithoutCancel(ctx), a.ID)
		switch {
		case err != nil:
			return nil, d.refuse(ctx, c, scr, err)
		case !ok:
			return nil, d.refuse(ctx, c, scr, approvalErrorf(a.ID, errdefs.ApprovalDenied,
				"approval %s was used by a retry of this call that came first", a.ID))
		}
		// Planned again: a secret may have been rotated while the call waited.
		return d.run(ctx, c, res)
	case store.ApprovalExpired:
		return nil, d.refuse(ctx, c, scr, approvalErrorf(a.ID, errdefs.ApprovalDenied,
			"approval %s for tool %q timed out after %s with no decision", a.ID, c.tool, q.timeout))
	default:
		return nil, d.refuse(ctx, c, scr, approvalErrorf(a.ID, errdefs.ApprovalDenied,
			"a person denied approval %s for tool %q", a.ID, c.tool))
	}
}

// stillRuns reports, as the error the waiting call ends with, a tool that
// no longer runs as it did when approval id was asked for: gone, no
// longer callable, at another version or with another definition (a tool
// file edited).
func (d *Dispatcher) stillRuns(ctx context.Context, c *call, id string) error {
	cur, _, err := c.view.Resolve(ctx, c.tool)
	if err != nil {
		return err
	}
	h, err := definitionHash(cur.Tool.Def)
	switch {
	case err != nil:
		return err
	case !policy.StatusCallable(cur.Tool.Status):
		return approvalErrorf(id, errdefs.ToolNotActive, "tool %q became %s while approval %s waited", c.tool, cur.Tool.Status, id)
	case cur.Tool.Version != c.version:
		return approvalErrorf(id, errdefs.ApprovalDenied,
			"tool %q changed to version %d while approval %s (version %d) waited; call again", c.tool, cur.Tool.Version, id, c.version)
	case h != c.defHash:
		return approvalErrorf(id, errdefs.ApprovalDenied,
			"tool %q's definition changed while approval %s waited; call again", c.tool, id)
	}
	return nil
}

// definitionHash names a tool's definition for its approvals: the sha256
// of its canonical JSON (everything a call of it depends on: kind block,
// parameters, permissions, secrets, limits).
func definitionHash(def *catalog.Definition) (string, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return "", errdefs.Errorf(errdefs.Internal, "hashing the definition of %q: %v", def.Name, err)
	}
	return store.ArgsHash(b)
}

// parkRoom holds a call of a worker to Config.MaxPendingApprovals of
// that worker's approvals pending at once (rate_limited past it, before
// anything is stored). It returns with the queue's park lock held, which
// the caller gives back (unlock) once its approval is stored, so calls
// parking at the same time cannot pass the cap together.
func (d *Dispatcher) parkRoom(ctx context.Context, c *call) (unlock func(), err error) {
	w := c.caller.Worker
	if w == "" || d.cfg.MaxPendingApprovals <= 0 {
		return func() {}, nil
	}
	q := d.approvals
	q.parkMu.Lock()
	n, err := d.cfg.Store.PendingApprovals(ctx, w)
	if err == nil && n >= d.cfg.MaxPendingApprovals {
		err = errdefs.Errorf(errdefs.RateLimited, "worker %q has %d calls waiting for a person's approval, its most "+
			"(worker_limits.pending_approvals); call again once a person has decided some (toolcage approvals list)", w, n)
	}
	if err != nil {
		q.parkMu.Unlock()
		return nil, err
	}
	return q.parkMu.Unlock, nil
}

// renderedCall is what a person is shown of req: a shell argv as JSON or
// the `sh -c` command (after "env {...}" when the tool sets variables: one
// may be what runs), an HTTP method and URL (credentials redacted), the
// sha256 of JavaScript code. Secret values are scrubbed by s.
func renderedCall(req *executors.Request, s *scrub.Scrubber) string {
	if req.Shell != nil && len(req.Shell.Env) > 0 {
		env := make(map[string]string, len(req.Shell.Env))
		for k, v := range req.Shell.Env {
			env[k] = s.Scrub(v)
		}
		sh := *req.Shell
		sh.Env = nil
		r := *req
		r.Shell = &sh
		return "env " + compactJSON(env) + " " + renderedCall(&r, s)
	}
	switch {
	case req.Shell != nil && req.Shell.Argv != nil:
		argv := make([]string, len(req.Shell.Argv))
		for i, a := range req.Shell.Argv {
			argv[i] = s.Scrub(a)
		}
		return compactJSON(argv)
	case req.Shell != nil:
		return "sh -c " + compactJSON(s.Scrub(req.Shell.Command))
	case req.HTTP != nil:
		return req.HTTP.Method + " " + s.Scrub(netguard.RedactURL(req.HTTP.URL))
	case req.JS != nil:
		sum := sha256.Sum256([]byte(req.JS.Code))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	return ""
}

func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// resolveApprovalID finds the approval an id or unique prefix (at least 4
// characters) names.
func (d *Dispatcher) resolveApprovalID(ctx context.Context, ref string) (string, error) {
	ref = strings.ToLower(strings.TrimSpace(ref))
	if len(ref) < minApprovalPrefix {
		return "", errdefs.Errorf(errdefs.InvalidRequest, "approval id %q is too short: give at least %d characters", ref, minApprovalPrefix)
	}
	if len(ref) > ApprovalIDLen || strings.Trim(ref, "abcdefghijklmnopqrstuvwxyz234567") != "" {
		return "", errdefs.Errorf(errdefs.NotFound, "no approval %q", ref)
	}
	ids, err := d.cfg.Store.ApprovalIDsWithPrefix(ctx, ref, 3)
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", errdefs.Errorf(errdefs.NotFound, "no approval %q", ref)
	case 1:
		return ids[0], nil
	}
	if ids[0] == ref {
		return ref, nil
	}
	more := ""
	if len(ids) > 2 {
		more = ", …"
	}
	return "", errdefs.Errorf(errdefs.InvalidRequest, "approval id prefix %q is ambiguous: it matches %s, %s%s; give more characters", ref, ids[0], ids[1], more)
}

// DecideApproval allows or denies a pending approval, named by its id or a
// unique prefix. Only a person (caller type user) decides. always (with
// allow) approves the same call (tool, worker, definition, arguments) from
// then on.
func (d *Dispatcher) DecideApproval(ctx context.Context, ref string, allow, always bool, caller principal.Caller) (*store.Approval, error) {
	if caller.Type != catalog.CreatedByUser {
		return nil, errdefs.Errorf(errdefs.Forbidden, "only a person (caller type user) may decide approvals, not a %s caller", caller.Type)
	}
	if always && !allow {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "always applies only to allow")
	}
	id, err := d.resolveApprovalID(ctx, ref)
	if err != nil {
		return nil, err
	}
	status := store.ApprovalDenied
	if allow {
		status = store.ApprovalAllowed
	}
	var a *store.Approval
	if always {
		a, err = d.cfg.Store.AllowApprovalAlways(ctx, id, caller.ID)
	} else {
		a, err = d.cfg.Store.DecideApproval(ctx, id, status, caller.ID)
	}
	switch {
	case errors.Is(err, store.ErrConflict) && a != nil:
		return nil, errdefs.Errorf(errdefs.Conflict, "approval %s is already %s", id, a.Status)
	case errors.Is(err, store.ErrNotFound):
		return nil, errdefs.Errorf(errdefs.NotFound, "no approval %q", id)
	case err != nil:
		return nil, err
	}
	d.log.Info("approval decided", "approval_id", id, "tool", a.Tool, "status", status, "always", always, "by", caller.ID)
	d.approvals.notify(id, status)
	d.announce(a)
	return a, nil
}

// announce tells Events of a new or decided approval.
func (d *Dispatcher) announce(a *store.Approval) {
	if d.cfg.Events != nil && a != nil {
		d.cfg.Events.ApprovalChanged(a)
	}
}
