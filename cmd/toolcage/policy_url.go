package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/urfave/cli/v2"
)

type policyURLOptions struct {
	url            string
	allowedDomains []string // empty: the URL's own host
	configFile     string
	json           bool
}

// urlLookupTimeout bounds the DNS look-up of policy url.
const urlLookupTimeout = 10 * time.Second

func policyURLCommand() *cli.Command {
	return &cli.Command{
		Name:      "url",
		Usage:     "check a URL against the network guard, fetching nothing",
		ArgsUsage: "URL",
		UsageText: `toolcage policy url [--config FILE] [--allow-domain DOMAIN]... [--json] URL

Examples:
   toolcage policy url https://api.github.com/repos
   toolcage policy url --allow-domain '*.example.com' https://api.example.com/v1
   toolcage policy url http://169.254.169.254/latest/meta-data/`,
		Description: `Checks URL as the network guard checks an HTTP tool's request, and resolves
its host as the guard would before connecting, without fetching anything.
Prints "allowed" and the addresses the host resolved to, or why it is refused.

--allow-domain gives the allowlist, as a tool's http.allowed_domains does
(exact hosts, or "*.example.com" for every sub-domain). Without it, the
allowlist is the URL's own host: the allowlist then lets it through, and only
the other checks apply (http or https, no userinfo, a canonical host, and no
private, loopback, link-local or cloud metadata address, before or after DNS).

Hosts in http.allow_private_hosts of the daemon's configuration (--config
FILE, else the embedded defaults, where it is empty) may resolve to private
and loopback addresses, as they may in a call.

No daemon is needed. Exits 0 when allowed, 3 when refused, 2 for a bad flag or
config, 1 when the host cannot be resolved.`,
		Flags: []cli.Flag{
			configFlag(),
			&cli.StringSliceFlag{Name: "allow-domain", Usage: "allow `DOMAIN` (repeatable; default: the URL's own host)"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			var raw string
			switch n := cCtx.NArg(); {
			case n == 0:
				return usageErrorf(cCtx, "missing the URL")
			case n > 1:
				return usageErrorf(cCtx, "want one URL, got %d arguments: %s", n, strings.Join(cCtx.Args().Slice(), " "))
			default:
				raw = cCtx.Args().First()
			}
			a := appOf(cCtx)
			return runPolicyURL(cCtx.Context, a, policyURLOptions{
				url:            raw,
				allowedDomains: cCtx.StringSlice("allow-domain"),
				configFile:     cCtx.String("config"),
				json:           a.jsonOut(cCtx),
			})
		},
	}
}

// urlVerdict is the --json answer of policy url.
type urlVerdict struct {
	Allowed   bool     `json:"allowed"`
	URL       string   `json:"url,omitempty"`    // when refused: the URL as the guard shows it
	Reason    string   `json:"reason,omitempty"` // when refused
	Addresses []string `json:"addresses,omitempty"`
}

func runPolicyURL(ctx context.Context, a *app, opts policyURLOptions) error {
	cfg, err := loadPolicyConfig(opts.configFile)
	if err != nil {
		return err
	}
	private := cfg.HTTP.AllowPrivateHosts
	// The daemon denies its own listeners to every tool; those the config
	// fixes (a port of 0, and the egress proxy's, are chosen at start).
	for _, l := range []string{cfg.Metrics.Listen, cfg.UI.Listen, cfg.MCP.Listen} {
		if ap, err := netip.ParseAddrPort(l); err == nil && ap.Port() != 0 {
			private = append(private[:len(private):len(private)], netguard.DenyEntry(ap))
		}
	}
	// The configuration's entries first, so a bad one is blamed on it.
	fallback, err := netguard.New(netguard.Config{AllowedDomains: []string{noHost}, AllowPrivateHosts: private})
	if err != nil {
		return inputErrorf("http.allow_private_hosts: %v", err)
	}
	guard := fallback
	switch {
	case len(opts.allowedDomains) > 0:
		if guard, err = netguard.New(netguard.Config{AllowedDomains: opts.allowedDomains, AllowPrivateHosts: private}); err != nil {
			return inputErrorf("--allow-domain: %v", err)
		}
	default:
		// The URL's own host; when that is no valid allowlist entry, the
		// fallback lets CheckURL say what is wrong with it.
		if g, err := netguard.New(netguard.Config{AllowedDomains: []string{ownHost(opts.url)}, AllowPrivateHosts: private}); err == nil {
			guard = g
		}
	}
	ctx, cancel := context.WithTimeout(ctx, urlLookupTimeout)
	defer cancel()
	_, addrs, err := guard.CheckURLWithResolve(ctx, opts.url)
	v := urlVerdict{Allowed: err == nil, Addresses: addrStrings(addrs)}
	if err != nil {
		var nd *netguard.DeniedError
		if !errors.As(err, &nd) {
			return &cliError{msg: fmt.Sprintf("looking up the host: %v", err), exit: exitFailure}
		}
		v.URL, v.Reason = nd.URL, nd.Reason
	}
	if opts.json {
		err = writePlainJSON(a.out, v)
	} else {
		err = writeURLVerdict(a.out, v)
	}
	if err != nil {
		return err
	}
	if !v.Allowed {
		return refusedSilently()
	}
	return nil
}

// noHost is an allowlist entry no URL's host is ever reached through
// (RFC 2606 reserves .invalid).
const noHost = "host.invalid"

// ownHost is the host of rawURL as url.Parse reads it, or noHost.
func ownHost(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return noHost
	}
	return u.Hostname()
}

func addrStrings(addrs []netip.Addr) []string {
	if len(addrs) == 0 {
		return nil
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}

func writeURLVerdict(w io.Writer, v urlVerdict) error {
	var b strings.Builder
	if v.Allowed {
		b.WriteString("allowed\n")
	} else {
		fmt.Fprintf(&b, "denied: %s\nurl: %s\n", v.Reason, v.URL)
	}
	if len(v.Addresses) > 0 {
		fmt.Fprintf(&b, "addresses: %s\n", strings.Join(v.Addresses, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
