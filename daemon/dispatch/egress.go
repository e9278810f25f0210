package dispatch

import (
	"time"

	"github.com/toolcage/toolcage/daemon/egress"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
)

// grantEgress hands a plan's real HTTP request to the egress proxy and
// returns the request the executor gets: the stand-in rendering, with the
// proxy's address (its loopback port, or its socket in a container) and
// the grant's token. revoke ends the grant.
func (d *Dispatcher) grantEgress(p *plan) (req *executors.Request, revoke func()) {
	// The executor's own timeout ends the call first; the grant outlives
	// it only by the time a reply needs to come back.
	deadline := d.now().Add(p.req.Limits.Timeout + 5*time.Second)
	token, revoke := d.cfg.Egress.Add(egress.Grant{Real: p.req.HTTP, Rendered: p.standIn, Redact: p.scrubber(d).ScrubBytes, Deadline: deadline})
	addr := d.cfg.Egress.Addr()
	if p.key.Egress { // in a container: the socket its runner binds in
		addr = executors.EgressUnixPrefix + host.ContainerEgressSocket
	}
	rendered := *p.standIn
	rendered.Egress = &executors.Egress{Addr: addr, Token: token}
	r := *p.req
	r.HTTP = &rendered
	return &r, revoke
}
