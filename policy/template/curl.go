package template

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// curl reads and sends local files through more than a leading "@": form
// fields (name=@file, name=<file), --data-urlencode name@file, upload and
// config options (-T, -K, --netrc-file), cookies read from a file (-b
// FILE), --write-out's %output{FILE}, and file:// (or other non-HTTP) URLs.
// A placeholder that is the whole value of such an option is refused when
// the tool is made; one that shares a word with literal text is checked
// when the tool is called.

// curlFileOpts take a local file (or socket) whose content curl sends or
// obeys: a placeholder may not be the value.
var curlFileOpts = shellsyntax.WordSet(`-T --upload-file -K --config --netrc-file --unix-socket
	--abstract-unix-socket --variable --cert -E --key --proxy-cert --proxy-key`)

// checkCurl marks curl's words for the render checks and refuses a
// placeholder that is the whole value of a file option, or that could
// supply a form field's or --data-urlencode's "name@file" part.
func (ck *checker) checkCurl(args []*word) error {
	prev := ""
	for _, w := range args {
		lit, opt := litOf(w.pieces), prev
		prev = ""
		if !w.hasPH {
			if shellsyntax.CurlValueOpts[lit] { // each starts with "-" and holds no "="
				prev = lit
			}
			continue
		}
		if w.afterDD {
			w.curlOpt = "--url" // after "--" every word is a URL
			continue
		}
		// An attached value: --opt=VALUE or -TVALUE.
		if strings.HasPrefix(lit, "-") && opt == "" {
			opt, _, _ = strings.Cut(lit, "=")
			if opt == lit && !strings.HasPrefix(lit, "--") && len(lit) >= 2 { // no "="
				opt = lit[:2]
			}
			lit = strings.TrimPrefix(strings.TrimPrefix(lit, opt), "=")
		}
		// {{x}}, -T{{x}} or --opt={{x}}: the placeholder starts the value.
		p := w.pieces
		startsPH := len(p) > 0 && p[0].ph >= 0 ||
			len(p) > 1 && p[1].ph >= 0 && strings.HasPrefix(p[0].lit, "-") && (p[0].lit == opt || p[0].lit == opt+"=")
		switch {
		case curlFileOpts[opt]:
			return ck.errAt(w.pos, "the value of curl %s names a local file (or socket) curl reads and sends; it may not come from an argument", opt)
		case (opt == "-F" || opt == "--form") && !strings.Contains(lit, "="):
			return ck.errAt(w.pos, "curl %s NAME=@FILE reads a local file: an argument may be the field's value (after a literal \"NAME=\"), not the whole field", opt)
		case opt == "--data-urlencode" && startsPH:
			return ck.errAt(w.pos, "curl --data-urlencode NAME@FILE reads a local file: an argument may be the content (after a literal \"NAME=\"), not the whole value")
		}
		w.curlOpt = cmp.Or(opt, "--url") // no option: a URL operand
	}
	return nil
}

// urlScheme is a URL's scheme.
var urlScheme = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*):`)

// checkCurlWord checks a rendered curl word against what the value of its
// option (curlOpt) may not make curl do with a file.
func checkCurlWord(w *word, vals []string, phs []Placeholder) error {
	first := slices.IndexFunc(w.pieces, func(p piece) bool { return p.ph >= 0 })
	if first < 0 || slices.ContainsFunc(w.pieces, func(p piece) bool { return p.ph >= 0 && phs[p.ph].Secret }) {
		return nil // no value, or the operator's own value in it
	}
	s, name := text(w.pieces, vals), phs[w.pieces[first].ph].Name
	switch w.curlOpt {
	case "--data-urlencode":
		// An "@" before any "=" names a file.
		at, eq := strings.IndexByte(s, '@'), strings.IndexByte(s, '=')
		if at >= 0 && (eq < 0 || at < eq) {
			return &ArgumentError{Name: name, Msg: "makes \"NAME@FILE\", which makes curl read a local file"}
		}
	case "-b", "--cookie":
		// Without "=" the value is a cookie file.
		if !strings.Contains(s, "=") {
			return &ArgumentError{Name: name, Msg: "makes curl -b read cookies from a local file (a cookie value holds \"=\")"}
		}
	case "-w", "--write-out":
		// %output{FILE} writes a file.
		if strings.Contains(strings.ToLower(s), "%output{") {
			return &ArgumentError{Name: name, Msg: "holds %output{…}, which makes curl write a local file"}
		}
	case "--url":
		// Only http and https may come from a value.
		if m := urlScheme.FindStringSubmatch(s); m != nil && w.pieces[0].ph >= 0 {
			if sc := strings.ToLower(m[1]); sc != "http" && sc != "https" {
				return &ArgumentError{Name: name, Msg: "is a " + sc + ": URL; curl may only be given http or https URLs by an argument"}
			}
		}
	}
	return nil
}
