package daemon

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// Authentication at the API edge: every request becomes a principal.Caller
// before any handler runs, or is refused.
//
//   - The peer's uid is checked first (checkPeer): only the daemon's own
//     user (or root) reaches this point at all.
//   - Authorization: Bearer tcw_… is a worker token: the caller is that
//     worker's agent (type llm, id worker:NAME, the token's id). A bad,
//     unknown or revoked token is unauthorized, alike.
//   - No token: the caller is the person owning the socket (type user, id
//     uid:N, or the Toolcage-Caller-Id label). A person may narrow to an
//     agent's view: Toolcage-Caller-Type: llm, and Toolcage-Worker naming
//     a registered worker (then the caller is llm, bounded by that worker:
//     what `call --worker` uses).
//
// Headers only narrow: nothing makes a token's holder a person, and a
// repeated identity header is refused, so a proxy or client that appends
// one cannot have the first copy win.

// identityHeaders may each appear at most once.
var identityHeaders = []string{api.HeaderAuthorization, api.HeaderCallerType, api.HeaderCallerID,
	api.HeaderWorker, api.HeaderProfile, api.HeaderSession}

// sessionRE bounds a session label: it lands in logs and the audit log.
var sessionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$`)

const callerKey ctxKey = iota + 100

// authenticated puts the request's caller in its context, or refuses it.
func (d *Daemon) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := d.authenticate(r)
		if err != nil {
			if errdefs.CodeOf(err) == errdefs.Unauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolcage"`)
			}
			writeError(w, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey, c)))
	})
}

// authenticate turns a request into its caller.
func (d *Daemon) authenticate(r *http.Request) (principal.Caller, error) {
	for _, h := range identityHeaders {
		if len(r.Header.Values(h)) > 1 {
			return principal.Caller{}, badRequest("header %s is repeated; send it once", h)
		}
	}
	h := r.Header
	c := principal.Caller{Profile: h.Get(api.HeaderProfile), Session: h.Get(api.HeaderSession)}
	if c.Session != "" && !sessionRE.MatchString(c.Session) {
		return c, badRequest("%s must be 1 to 64 letters, digits or ._:@- (starting with a letter or digit)", api.HeaderSession)
	}
	typ := h.Get(api.HeaderCallerType)
	switch typ {
	case "", principal.TypeUser, principal.TypeLLM:
	default:
		return c, badRequest("%s must be user or llm, not %q", api.HeaderCallerType, typ)
	}
	if auth := h.Get(api.HeaderAuthorization); auth != "" {
		return d.authenticateToken(r.Context(), c, h, auth, typ)
	}
	// A person.
	c.Type, c.ID, c.Worker = principal.TypeUser, h.Get(api.HeaderCallerID), h.Get(api.HeaderWorker)
	if c.ID == "" {
		if p, ok := r.Context().Value(peerKey).(peer); ok {
			c.ID = "uid:" + strconv.FormatUint(uint64(p.uid), 10)
		}
	}
	if typ == principal.TypeLLM {
		c.Type = principal.TypeLLM
	}
	if c.Worker != "" {
		// A registered worker's name puts the person in its agent's place;
		// any other name stays a label the config's profiles may map.
		if _, err := d.store.GetWorker(r.Context(), c.Worker); err == nil {
			c.Type = principal.TypeLLM
		} else if !errors.Is(err, store.ErrNotFound) {
			return c, err
		}
	}
	return c, nil
}

// authenticateToken checks a worker token and makes its worker's caller.
func (d *Daemon) authenticateToken(ctx context.Context, c principal.Caller, h http.Header, auth, typ string) (principal.Caller, error) {
	scheme, token, _ := strings.Cut(auth, " ")
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return c, errdefs.Errorf(errdefs.Unauthorized, "%s must be \"Bearer <worker token>\"", api.HeaderAuthorization)
	}
	name, tokenID, err := d.store.Authenticate(ctx, strings.TrimSpace(token))
	if errors.Is(err, store.ErrInvalidToken) {
		return c, errdefs.Errorf(errdefs.Unauthorized, "the worker token is not valid (unknown, revoked or malformed)")
	}
	if err != nil {
		return c, err
	}
	if typ == principal.TypeUser {
		return c, errdefs.Errorf(errdefs.Forbidden, "a worker token is an agent's: %s: user is refused", api.HeaderCallerType)
	}
	if h.Get(api.HeaderCallerID) != "" {
		return c, errdefs.Errorf(errdefs.Forbidden, "a worker token's caller id is its worker's; label a session with %s instead of %s", api.HeaderSession, api.HeaderCallerID)
	}
	if w := h.Get(api.HeaderWorker); w != "" && w != name {
		return c, errdefs.Errorf(errdefs.Forbidden, "the token is worker %q's; %s may not name another worker", name, api.HeaderWorker)
	}
	c.Type, c.ID, c.Worker, c.TokenID = principal.TypeLLM, "worker:"+name, name, tokenID
	return c, nil
}

// callerOf is the request's authenticated caller.
func callerOf(r *http.Request) (principal.Caller, error) {
	c, ok := r.Context().Value(callerKey).(principal.Caller)
	if !ok {
		return c, errdefs.Errorf(errdefs.Internal, "request reached a handler unauthenticated")
	}
	return c, nil
}
