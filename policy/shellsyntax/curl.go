package shellsyntax

// CurlValueOpts are curl options that take a value (the next word): the
// template check (policy/template) and the deny rules' address checks read
// them to tell an option's value from a URL operand.
var CurlValueOpts = map[string]bool{
	"-A": true, "-b": true, "-c": true, "-C": true, "-d": true, "-D": true, "-e": true, "-E": true, "-F": true,
	"-H": true, "-K": true, "-m": true, "-o": true, "-P": true, "-Q": true, "-r": true, "-t": true, "-T": true,
	"-u": true, "-U": true, "-w": true, "-x": true, "-X": true, "-y": true, "-Y": true, "-z": true,
	"--data": true, "--data-ascii": true, "--data-binary": true, "--data-raw": true, "--data-urlencode": true,
	"--json": true, "--url": true, "--form": true, "--form-string": true, "--header": true, "--user-agent": true,
	"--referer": true, "--output": true, "--upload-file": true, "--config": true, "--cookie": true,
	"--cookie-jar": true, "--write-out": true, "--proxy": true, "--request": true, "--user": true,
	"--max-time": true, "--connect-timeout": true, "--retry": true, "--retry-delay": true, "--cacert": true,
	"--capath": true, "--cert": true, "--key": true, "--resolve": true, "--connect-to": true,
	"--unix-socket": true, "--abstract-unix-socket": true, "--netrc-file": true, "--variable": true,
	"--output-dir": true, "--trace": true, "--trace-ascii": true, "--dump-header": true, "--limit-rate": true,
	"--range": true, "--interface": true, "--dns-servers": true, "--proxy-user": true, "--oauth2-bearer": true,
	"--aws-sigv4": true, "--url-query": true, "--expand-data": true, "--expand-url": true, "--noproxy": true,
	"--max-filesize": true, "--speed-limit": true, "--speed-time": true, "--time-cond": true, "--proto": true,
	"--proto-redir": true, "--proto-default": true, "--stderr": true, "--proxy-cert": true, "--proxy-key": true,
}
