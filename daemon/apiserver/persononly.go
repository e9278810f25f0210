package apiserver

import (
	"context"
	"net/http"
	"strings"

	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// Person-only acts: deciding approvals, approving or rejecting tools,
// setting, listing, removing or rotating secrets, registering, changing or
// removing workers and their tokens, and minting a review page login link.
// An agent (a worker token, or a person narrowed to llm) gets forbidden. Every attempt, done,
// failed or refused, goes to the admin log with its principal.

// The acts, as the admin log names them.
const (
	ActApprovalAllow = "approval.allow"
	ActApprovalDeny  = "approval.deny"
	ActToolApprove   = "tool.approve"
	ActToolReject    = "tool.reject"
	ActSecretSet     = "secret.set"
	ActSecretList    = "secret.list"
	ActSecretRemove  = "secret.rm"
	ActSecretsRotate = "secret.rotate"
	ActWorkerAdd     = "worker.add"
	ActWorkerRemove  = "worker.rm"
	ActTokenRotate   = "worker.token.rotate"
	ActTokenRevoke   = "worker.token.revoke"
	ActUILogin       = "ui.login"
	// ActWorkerReload is the daemon's own: a worker's files another
	// user can change, refused at a reload or at start.
	ActWorkerReload = worker.ActReload
	// ActAuthRefused is not an act but an attempt at one: a live worker
	// token sent with identity headers claiming more (a person's type, a
	// caller id, another worker), refused before any route; its target is
	// the request's method and path.
	ActAuthRefused = "auth.refused"
)

// actWords says what each act is, for the refusal's message.
var actWords = map[string]string{
	ActApprovalAllow: "decide approvals", ActApprovalDeny: "decide approvals",
	ActToolApprove: "approve a tool", ActToolReject: "reject a tool",
	ActSecretSet: "set secrets", ActSecretList: "list secrets", ActSecretRemove: "delete secrets",
	ActSecretsRotate: "rotate the secrets key", ActWorkerAdd: "register workers",
	ActWorkerRemove: "remove workers", ActTokenRotate: "rotate worker tokens",
	ActTokenRevoke: "revoke worker tokens", ActUILogin: "log in to the review page",
}

// person wraps a handler as a person-only act on the path value named
// target ("" for none).
func (d *Server) person(act, target string, fn func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		t := ""
		if target != "" {
			t = r.PathValue(target)
		}
		return d.personOnly(r, act, t, func(principal.Caller) error { return fn(w, r) })
	}
}

// maxActTarget bounds the target an admin act records.
const maxActTarget = 512

// personOnly runs fn, the act on target, if the request's caller is a
// person, and records the attempt either way.
func (d *Server) personOnly(r *http.Request, act, target string, fn func(principal.Caller) error) error {
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	if !c.IsPerson() {
		err = errdefs.Errorf(errdefs.Forbidden, "only a person may %s", actWords[act])
		d.log.Warn("person-only act refused", "act", act, "target", target, "caller", c.ID, "worker", c.Worker, "token_id", c.TokenID)
	} else {
		err = fn(c)
	}
	d.recordAct(r.Context(), c, act, target, err)
	return err
}

// recordAct writes one admin act. A failure to write it is logged: the act
// itself has happened (or been refused) already.
func (d *Server) recordAct(ctx context.Context, c principal.Caller, act, target string, actErr error) {
	if len(target) > maxActTarget {
		// A target comes from the request (a path, a name); the log keeps
		// enough to tell what was meant.
		target = strings.ToValidUTF8(target[:maxActTarget], "") + "…"
	}
	a := &store.AdminAct{Act: act, Target: target, CallerID: c.ID, CallerType: c.Type, Worker: c.Worker,
		TokenID: c.TokenID, Session: c.Session, Outcome: store.ActOK}
	if actErr != nil {
		a.Outcome, a.ErrorCode, a.Error = store.ActFailed, string(errdefs.CodeOf(actErr)), actErr.Error()
		if errdefs.CodeOf(actErr) == errdefs.Forbidden {
			a.Outcome = store.ActRefused
		}
	}
	if err := d.store.RecordAdminAct(context.WithoutCancel(ctx), a); err != nil {
		d.log.Error("recording admin act", "act", act, "target", target, "err", err)
	}
}
