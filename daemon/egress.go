package daemon

import (
	"net/url"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/egress"
	"github.com/toolcage/toolcage/executors"
)

// renderForEgress renders an HTTP tool's request again with a stand-in
// token for each secret it uses. It returns nil when the request uses no
// secret, or when a secret lands where the proxy cannot put it back (the
// URL's scheme or host): then the real request goes to the executor, as
// the only way the call can run.
func (d *Dispatcher) renderForEgress(res *catalog.Resolved, args map[string]any, secrets func(string) (string, error), real *executors.HTTPCall) *executors.HTTPCall {
	if d.egress == nil || len(res.Tool.Def.Secrets) == 0 {
		return nil
	}
	stand := map[string]string{}
	tokens := func(name string) (string, error) {
		if _, err := secrets(name); err != nil {
			return "", err
		}
		t, ok := stand[name]
		if !ok {
			t = egress.NewToken()
			stand[name] = t
		}
		return t, nil
	}
	r, err := d.renderHTTP(res, args, tokens)
	if err != nil || len(stand) == 0 {
		return nil
	}
	ru, err1 := url.Parse(real.URL)
	tu, err2 := url.Parse(r.URL)
	if err1 != nil || err2 != nil || ru.Scheme != tu.Scheme || ru.Host != tu.Host {
		return nil
	}
	r.MaxResponseBytes = real.MaxResponseBytes
	return r
}

// grantEgress hands the call's real request to the egress proxy and puts
// the rendered one, with the proxy's address and the grant's token, into
// req. The returned function ends the grant.
func (d *Dispatcher) grantEgress(call *pendingCall, req *executors.Request) func() {
	scr := d.scrubberOf(call)
	// The executor's own timeout ends the call first; the grant outlives
	// it only by the time a reply needs to come back.
	deadline := time.Now().Add(req.Limits.Timeout + 5*time.Second)
	token, revoke := d.egress.Add(egress.Grant{Real: req.HTTP, Rendered: call.egress, Redact: scr.ScrubBytes, Deadline: deadline})
	rendered := *call.egress
	rendered.Egress = &executors.Egress{Addr: d.egress.Addr(), Token: token}
	req.HTTP = &rendered
	return revoke
}
