package apiserver

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/scrub"
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
func (d *Server) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := d.authenticate(r)
		if err != nil {
			if c.TokenID != "" {
				// A live token with headers that claim more than it is:
				// the person learns of the attempt as of any refused act.
				d.recordAct(r.Context(), c, ActAuthRefused, r.Method+" "+r.URL.Path, err)
			}
			if errdefs.CodeOf(err) == errdefs.Unauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolcage"`)
			}
			writeError(w, err)
			return
		}
		if d.claimConn != nil {
			if err := d.claimConn(w, r, c); err != nil {
				writeError(w, err)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey, c)))
	})
}

// claims is what a request's identity headers say, checked for form only.
type claims struct {
	token   string // the bearer token; "" when no Authorization
	typ     string // Toolcage-Caller-Type: "", user or llm
	id      string
	worker  string
	profile string
	session string
}

// readClaims reads the identity headers: each at most once, each well
// formed. It decides nothing about who the caller is.
func readClaims(h http.Header) (claims, error) {
	for _, name := range identityHeaders {
		if len(h.Values(name)) > 1 {
			return claims{}, badRequest("header %s is repeated; send it once", name)
		}
	}
	c := claims{typ: h.Get(api.HeaderCallerType), id: h.Get(api.HeaderCallerID), worker: h.Get(api.HeaderWorker),
		profile: h.Get(api.HeaderProfile), session: h.Get(api.HeaderSession)}
	if c.session != "" && !sessionRE.MatchString(c.session) {
		return c, badRequest("%s must be 1 to 64 letters, digits or ._:@- (starting with a letter or digit)", api.HeaderSession)
	}
	switch c.typ {
	case "", principal.TypeUser, principal.TypeLLM:
	default:
		return c, badRequest("%s must be user or llm, not %q", api.HeaderCallerType, c.typ)
	}
	if auth := h.Get(api.HeaderAuthorization); auth != "" {
		scheme, token, _ := strings.Cut(auth, " ")
		c.token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "Bearer") || c.token == "" {
			return c, errdefs.Errorf(errdefs.Unauthorized, "%s must be \"Bearer <worker token>\"", api.HeaderAuthorization)
		}
	}
	return c, nil
}

// authenticate turns a request into its caller.
func (d *Server) authenticate(r *http.Request) (principal.Caller, error) {
	cl, err := readClaims(r.Header)
	if err != nil {
		return principal.Caller{}, err
	}
	c := principal.Caller{Profile: cl.profile, Session: cl.session}
	if cl.token != "" {
		return d.authenticateToken(r.Context(), c, cl)
	}
	// A person.
	c.Type, c.ID, c.Worker = principal.TypeUser, cl.id, cl.worker
	if c.ID == "" {
		if p, ok := r.Context().Value(peerKey).(peer); ok {
			c.ID = "uid:" + strconv.FormatUint(uint64(p.uid), 10)
		}
	}
	if cl.typ == principal.TypeLLM {
		c.Type = principal.TypeLLM
	}
	if c.Worker != "" {
		// A registered worker's name puts the person in its agent's place;
		// any other name stays a label the config's profiles may map.
		if _, err := d.workers.Get(c.Worker); err == nil {
			c.Type = principal.TypeLLM
		}
	}
	return c, nil
}

// authenticateToken checks a worker token and makes its worker's caller.
func (d *Server) authenticateToken(ctx context.Context, c principal.Caller, cl claims) (principal.Caller, error) {
	agent, err := d.tokenCaller(ctx, cl.token)
	if err != nil {
		return c, err
	}
	name := agent.Worker
	// On a refusal too the caller is the token's agent, so that the
	// attempt is recorded as its (authenticated).
	c.Type, c.ID, c.Worker, c.TokenID = agent.Type, agent.ID, agent.Worker, agent.TokenID
	switch {
	case cl.typ == principal.TypeUser:
		return c, errdefs.Errorf(errdefs.Forbidden, "a worker token is an agent's: %s: user is refused", api.HeaderCallerType)
	case cl.id != "":
		return c, errdefs.Errorf(errdefs.Forbidden, "a worker token's caller id is its worker's; label a session with %s instead of %s", api.HeaderSession, api.HeaderCallerID)
	case cl.worker != "" && cl.worker != name:
		return c, errdefs.Errorf(errdefs.Forbidden, "the token is worker %q's; %s may not name another worker", name, api.HeaderWorker)
	}
	return c, nil
}

// workerCallerID is the caller id of a worker's agent.
func workerCallerID(worker string) string { return "worker:" + worker }

// callerOf is the request's authenticated caller.
func callerOf(r *http.Request) (principal.Caller, error) {
	c, ok := r.Context().Value(callerKey).(principal.Caller)
	if !ok {
		return c, errdefs.Errorf(errdefs.Internal, "request reached a handler unauthenticated")
	}
	return c, nil
}

// WorkerTokenRule redacts worker tokens (store.TokenPrefix and 52 base32
// characters) from everything a call returns, logs or audits.
var WorkerTokenRule = scrub.Rule{Kind: "toolcage-worker-token", Pattern: `\b(` + store.TokenPrefix + `[a-z2-7]{52})\b`,
	SecretGroup: 1, Keywords: []string{store.TokenPrefix}}
