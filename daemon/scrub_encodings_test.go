package daemon

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
)

// A shell tool holding a secret prints it through the encodings a reader
// decodes by hand (dumps, base32, UTF-16, reversed, spaced out, split
// between stdout and stderr); the result that comes back through the
// daemon, where stdout is a JSON string with escaped line breaks, holds
// it in none of them.
func TestScrubDumpedSecret(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	v := secretValue
	putSecret(t, c, "api_token", api.SecretValue{Value: &v})
	doc := `printf 'HOME=/home/app\nAPI_TOKEN=%s\nLANG=C\n' {{secret.api_token}} | `
	for i, cmd := range []string{
		doc + "xxd",
		doc + "xxd -g1 -c 8",
		doc + "hexdump -C",
		doc + "hexdump -C -v",
		doc + "hexdump",
		doc + "od -c",
		doc + "od -An -tx1",
		doc + "od -t o1",
		doc + "od -t d1",
		doc + "od -t u1",
		doc + "od",
		doc + "od -x",
		doc + "base32",
		doc + "basenc --base32hex",
		doc + "iconv -t UTF-16",
		doc + "iconv -t UTF-16BE",
		doc + "rev | base64",
		doc + "rev",
		doc + "sed 's/./& /g'",
		doc + "sed 's/./&,/g'",
		"s={{secret.api_token}}; printf '%s' \"${s%????????????}\"; printf '%s\\n' \"${s#????????????}\" >&2",
	} {
		name := "dump_" + strconv.Itoa(i)
		def, _ := json.Marshal(map[string]any{"name": name, "description": "d", "kind": "shell",
			"secrets": []string{"api_token"}, "shell": map[string]any{"command": cmd}})
		create(t, c, string(def))
		r, err := callTool(c, name, map[string]any{})
		if err != nil || r.IsError {
			t.Errorf("%s: %v %+v", cmd, err, r)
			continue
		}
		out := shellOut(t, r)
		if !strings.Contains(out.Stdout+out.Stderr, "[REDACTED:secret:api_token]") {
			t.Errorf("%s: nothing redacted in %q / %q", cmd, out.Stdout, out.Stderr)
		}
		if read := readBack(out.Stdout + out.Stderr + "\n" + out.Stderr + out.Stdout); strings.Contains(read, secretValue) {
			t.Errorf("%s: the secret can be read back from %q / %q", cmd, out.Stdout, out.Stderr)
		}
	}
}

var (
	reDumpOffset = regexp.MustCompile(`^[0-9a-f]{7,8}:?`)
	reNumber     = regexp.MustCompile(`[0-9a-fA-F]+`)
	reNotNumber  = regexp.MustCompile(`[^0-9a-fA-F ]`)
)

// readBack is what a reader makes of a tool's output by hand: each line's
// numbers (offsets and text columns dropped) as hex bytes, hex words,
// octal and decimal; the text columns joined; od -c's characters; the
// text without NULs, spaces or commas; base32 and base64 decoded, and
// reversed.
func readBack(out string) string {
	var b, cols strings.Builder
	var nums []string
	b.WriteString(out)
	for _, line := range strings.Split(out, "\n") {
		line = reDumpOffset.ReplaceAllString(line, "")
		body := line
		if j := strings.IndexByte(line, '|'); j >= 0 {
			body = line[:j]
			cols.WriteString(strings.Trim(line[j:], "|"))
		} else if j := strings.LastIndex(line, "  "); j >= 0 && reNotNumber.MatchString(strings.TrimSpace(line[j:])) {
			body = line[:j]
			cols.WriteString(strings.TrimSpace(line[j:]))
		}
		nums = append(nums, reNumber.FindAllString(body, -1)...)
		for p := 0; p+4 <= len(line); p += 4 { // od -c
			if f := strings.TrimLeft(line[p:p+4], " "); len(f) == 1 {
				cols.WriteString(f)
			}
		}
	}
	b.WriteString("\n" + cols.String() + "\n")
	for _, w := range nums { // hex, big-endian
		for i := 0; i+2 <= len(w); i += 2 {
			x, _ := strconv.ParseUint(w[i:i+2], 16, 8)
			b.WriteByte(byte(x))
		}
	}
	b.WriteByte('\n')
	for _, w := range nums { // hex words, little-endian
		for i := len(w) - 2; i >= 0; i -= 2 {
			x, _ := strconv.ParseUint(w[i:i+2], 16, 8)
			b.WriteByte(byte(x))
		}
	}
	b.WriteByte('\n')
	for _, base := range []int{8, 10} {
		for _, w := range nums {
			x, _ := strconv.ParseUint(w, base, 16)
			b.WriteByte(byte(x))
			if len(w) == 6 {
				b.WriteByte(byte(x >> 8))
			}
		}
		b.WriteByte('\n')
	}
	plain := strings.NewReplacer("\x00", "", " ", "", ",", "", "\n", "").Replace(out)
	b.WriteString(plain + "\n")
	for _, enc := range []*base32.Encoding{base32.StdEncoding, base32.HexEncoding} {
		d, _ := enc.DecodeString(plain)
		b.Write(d)
	}
	d, _ := base64.StdEncoding.DecodeString(plain)
	b.Write(d)
	r := []byte(b.String())
	slices.Reverse(r)
	return b.String() + string(r)
}

// A JavaScript tool holding a secret logs it in two pieces, returns it
// spelled out (its characters, their codes, reversed); the call's logs and
// result, as the daemon returns them, hold it in none of these.
func TestScrubJSSpelledSecret(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	v := secretValue
	putSecret(t, c, "api_token", api.SecretValue{Value: &v})
	for i, code := range []string{
		"const k = utils.getSecret('api_token'); console.log(k.slice(0, 10)); console.log(k.slice(10)); return 'ok'",
		"const k = utils.getSecret('api_token'); console.log('part: ' + k.slice(0, 7)); return k.slice(7)",
		"return utils.getSecret('api_token').split('')",
		"return Array.from(utils.getSecret('api_token')).map(c => c.charCodeAt(0))",
		"return Array.from(utils.getSecret('api_token')).map(c => '0x' + c.charCodeAt(0).toString(16)).join(', ')",
		"return utils.getSecret('api_token').split('').reverse().join('')",
		"return utils.getSecret('api_token').split('').join(' ')",
	} {
		name := "spell_" + strconv.Itoa(i)
		def, _ := json.Marshal(map[string]any{"name": name, "description": "d", "kind": "js",
			"secrets": []string{"api_token"}, "js": map[string]any{"code": code}})
		create(t, c, string(def))
		r, err := callTool(c, name, map[string]any{})
		if err != nil || r.IsError {
			t.Errorf("%s: %v %+v", code, err, r)
			continue
		}
		all := string(r.Result)
		for _, l := range r.Logs {
			all += "\n" + l.Message
		}
		var chars []string
		if json.Unmarshal(r.Result, &chars) == nil {
			all += "\n" + strings.Join(chars, "")
		}
		var codes []int
		if json.Unmarshal(r.Result, &codes) == nil {
			for _, n := range codes {
				all += string(rune(n))
			}
		}
		var joined string
		for _, l := range r.Logs {
			joined += l.Message
		}
		if !strings.Contains(all, "[REDACTED:secret:api_token]") || strings.Contains(readBack(all)+joined+strings.Trim(string(r.Result), `"`), secretValue) {
			t.Errorf("%s: the secret can be read back from %s", code, all)
		}
	}
}
