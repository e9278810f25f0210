package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// The approval queue. A call of an `approval: ask` tool is validated and
// rendered (so policy refusals come first), then, unless a person approved
// this exact call (tool, version, arguments) for good, it parks as a
// pending approval in the store and its caller waits for a decision:
// allowed runs it, denied or no decision within approvals.timeout refuses
// it with approval_denied. Pending approvals outlive the daemon; a caller
// does not: after a restart (or once the caller gives up) allowing a pending
// approval runs nothing, but `allow --always` still approves the next
// identical call.

// ApprovalsConfig sets the approval queue.
type ApprovalsConfig struct {
	// Timeout is how long a caller waits for a person's decision.
	Timeout time.Duration `mapstructure:"timeout"`
}

// approvalIDLen is the length of an approval id: 8 base32 characters (40
// random bits), short enough to type.
const approvalIDLen = 8

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
	timeout  time.Duration
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

// approvalError carries the id of the approval a refused call parked in.
type approvalError struct {
	id  string
	err error
}

func (e *approvalError) Error() string { return e.err.Error() }
func (e *approvalError) Unwrap() error { return e.err }

func approvalErrorf(id string, code errdefs.Code, format string, args ...any) error {
	return &approvalError{id: id, err: errdefs.Errorf(code, format, args...)}
}

type approvalWaitKey struct{}

// withoutApprovalWait makes a call needing approval return approval_required
// at once instead of waiting for a decision.
func withoutApprovalWait(ctx context.Context) context.Context {
	return context.WithValue(ctx, approvalWaitKey{}, false)
}

func waitsForApproval(ctx context.Context) bool {
	v, ok := ctx.Value(approvalWaitKey{}).(bool)
	return !ok || v
}

// callAsk runs a call of an `approval: ask` tool once a person allows it.
func (d *Dispatcher) callAsk(ctx context.Context, call *pendingCall, res *catalog.Resolved) (*api.CallResponse, error) {
	if err := d.validArgs(ctx, call, res); err != nil {
		return nil, err
	}
	// Rendered first: a call policy refuses never reaches a person, and
	// what the person sees is what would run.
	req, err := d.request(ctx, call, res)
	if err != nil {
		return nil, d.refuse(ctx, call, err)
	}
	hash, err := store.ArgsHash(call.args)
	if err != nil {
		return nil, d.refuse(ctx, call, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err})
	}
	always, err := d.store.HasAlwaysApproval(ctx, call.tool, call.version, hash)
	if err != nil {
		return nil, d.refuse(ctx, call, err)
	}
	if always {
		return d.execute(ctx, call, res, req)
	}
	q := d.approvals
	scr := d.scrubberOf(call)
	a := &store.Approval{Tool: call.tool, Version: call.version, CallerID: call.caller.ID, CallerType: call.caller.Type,
		ArgsHash: hash, Args: scrubJSON(scr, call.args), Rendered: renderedCall(req, scr)}
	var ch chan string
	for range 5 {
		a.ID = newApprovalID()
		// Waiting before the approval exists, so no decision is missed.
		ch = q.register(a.ID)
		if err = d.store.CreateApproval(ctx, a); !errors.Is(err, store.ErrConflict) {
			break
		}
		q.unregister(a.ID)
	}
	if err != nil {
		q.unregister(a.ID)
		return nil, d.refuse(ctx, call, err)
	}
	defer q.unregister(a.ID)
	d.log.Info("call waits for approval", "approval_id", a.ID, "tool", call.tool, "version", call.version, "caller_id", call.caller.ID)
	if !waitsForApproval(ctx) {
		return nil, d.refuse(ctx, call, approvalErrorf(a.ID, errdefs.ApprovalRequired,
			"tool %q needs a person's approval for each call; approval %s is pending (toolcage approvals allow %s)", call.tool, a.ID, a.ID))
	}
	timer := time.NewTimer(q.timeout)
	defer timer.Stop()
	var status string
	select {
	case status = <-ch:
	case <-timer.C:
		got, err := d.store.DecideApproval(context.WithoutCancel(ctx), a.ID, store.ApprovalExpired, "timeout")
		switch {
		case err == nil:
			status = store.ApprovalExpired
		case errors.Is(err, store.ErrConflict) && got != nil:
			status = got.Status // decided just as the wait ended
		default:
			return nil, d.refuse(ctx, call, err)
		}
	case <-ctx.Done():
		return nil, d.refuse(ctx, call, approvalErrorf(a.ID, errdefs.ApprovalRequired,
			"the caller stopped waiting for approval %s; it stays pending", a.ID))
	case <-q.stopping:
		return nil, d.refuse(ctx, call, approvalErrorf(a.ID, errdefs.Unavailable,
			"the daemon is stopping; approval %s stays pending, and `toolcage approvals allow %s --always` approves the next identical call", a.ID, a.ID))
	}
	switch status {
	case store.ApprovalAllowed:
		// The tool may have changed while the call waited: what runs is
		// what the person saw, and only if the tool still runs as such.
		cur, err := d.catalog.Resolve(ctx, call.tool)
		switch {
		case err != nil:
			return nil, d.refuse(ctx, call, err)
		case cur.Tool.Status != catalog.StatusActive:
			return nil, d.refuse(ctx, call, approvalErrorf(a.ID, errdefs.ToolNotActive,
				"tool %q became %s while approval %s waited", call.tool, cur.Tool.Status, a.ID))
		case cur.Tool.Version != call.version:
			return nil, d.refuse(ctx, call, approvalErrorf(a.ID, errdefs.ApprovalDenied,
				"tool %q changed to version %d while approval %s (version %d) waited; call again", call.tool, cur.Tool.Version, a.ID, call.version))
		}
		// Built again: a secret may have been rotated while the call waited.
		return d.run(ctx, call, res)
	case store.ApprovalExpired:
		return nil, d.refuse(ctx, call, approvalErrorf(a.ID, errdefs.ApprovalDenied,
			"approval %s for tool %q timed out after %s with no decision", a.ID, call.tool, q.timeout))
	default:
		return nil, d.refuse(ctx, call, approvalErrorf(a.ID, errdefs.ApprovalDenied,
			"a person denied approval %s for tool %q", a.ID, call.tool))
	}
}

// renderedCall is what a person is shown of req: a shell argv as JSON or
// the `sh -c` command, an HTTP method and URL (credentials redacted), the
// sha256 of JavaScript code. Secret values are scrubbed by s.
func renderedCall(req *executors.Request, s *scrub.Scrubber) string {
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
	if len(ref) > approvalIDLen || strings.Trim(ref, "abcdefghijklmnopqrstuvwxyz234567") != "" {
		return "", errdefs.Errorf(errdefs.NotFound, "no approval %q", ref)
	}
	ids, err := d.store.ApprovalIDsWithPrefix(ctx, ref, 3)
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
// allow) approves the same call (tool, version, arguments) from then on.
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
	a, err := d.store.DecideApproval(ctx, id, status, caller.ID)
	switch {
	case errors.Is(err, store.ErrConflict) && a != nil:
		return nil, errdefs.Errorf(errdefs.Conflict, "approval %s is already %s", id, a.Status)
	case errors.Is(err, store.ErrNotFound):
		return nil, errdefs.Errorf(errdefs.NotFound, "no approval %q", id)
	case err != nil:
		return nil, err
	}
	if always {
		if err := d.store.AddAlwaysApproval(ctx, a.Tool, a.Version, a.ArgsHash); err != nil {
			return nil, err
		}
	}
	d.log.Info("approval decided", "approval_id", id, "tool", a.Tool, "status", status, "always", always, "by", caller.ID)
	d.approvals.notify(id, status)
	return a, nil
}

func approvalView(a *store.Approval, always bool) api.Approval {
	v := api.Approval{ID: a.ID, Tool: a.Tool, Version: a.Version, CallerID: a.CallerID, CallerType: a.CallerType,
		Arguments: a.Args, Rendered: a.Rendered, Status: a.Status, CreatedAt: a.CreatedAt, DecidedBy: a.DecidedBy, Always: always}
	if len(v.Arguments) == 0 {
		v.Arguments = json.RawMessage("{}")
	}
	if !a.DecidedAt.IsZero() {
		t := a.DecidedAt
		v.DecidedAt = &t
	}
	return v
}

func (d *Daemon) listApprovals(w http.ResponseWriter, r *http.Request) error {
	status := r.URL.Query().Get("status")
	switch status {
	case "", store.ApprovalPending, store.ApprovalAllowed, store.ApprovalDenied, store.ApprovalExpired:
	default:
		return badRequest("status must be pending, allowed, denied or expired, not %q", status)
	}
	list, err := d.store.ListApprovals(r.Context(), status)
	if err != nil {
		return err
	}
	out := api.ApprovalList{Approvals: make([]api.Approval, 0, len(list))}
	for _, a := range list {
		out.Approvals = append(out.Approvals, approvalView(a, false))
	}
	return writeJSON(w, http.StatusOK, out)
}

func (d *Daemon) decideApproval(allow bool) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		caller, err := callerOf(r)
		if err != nil {
			return err
		}
		var req api.ApprovalDecision
		if b, err := readBody(r); err != nil {
			return err
		} else if len(bytes.TrimSpace(b)) > 0 {
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&req); err != nil {
				return badRequest("bad JSON body: %v", strings.TrimPrefix(err.Error(), "json: "))
			}
		}
		a, err := d.disp.DecideApproval(r.Context(), r.PathValue("id"), allow, req.Always, caller)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, approvalView(a, req.Always))
	}
}

// approvalWaitOf reads Toolcage-Approval-Wait: "0" (or "false") returns at
// once; anything else, or no header, waits.
func approvalWaitOf(r *http.Request) (bool, error) {
	v := r.Header.Get(api.HeaderApprovalWait)
	if v == "" {
		return true, nil
	}
	if n, err := strconv.ParseBool(v); err == nil {
		return n, nil
	}
	return false, badRequest("%s must be 0 or 1, not %q", api.HeaderApprovalWait, v)
}
