package template

import "testing"

// TestShellGrammarDecisions pins the readings decided where the deny
// rules' and the templates' tables used to disagree (policy/shellsyntax,
// grammar.go); the deny rules' half is in policy/shellguard.
func TestShellGrammarDecisions(t *testing.T) {
	for _, cmd := range []string{
		"perl -M {{x}} -e 1",      // -MFoo;code runs code
		"perl -m {{x}} script.pl", // likewise
		"ruby -r {{x}} script.rb", // -r loads a file as code
		"ruby -x {{x}}",           // -x takes no separate value: {{x}} is the script
		"php -d {{x}} script.php", // auto_prepend_file= runs a file
		"php -f {{x}}",            // -f names the script
		"sudo -s {{x}}",           // a shell runs the command line
		"sudo -i {{x}}",
		"doas -s {{x}}",
		"node -r {{x}} app.js",
		"python3 -m {{x}}",
		"lua -l {{x}} script.lua",
		// The reader (shellsyntax.Read) where the templates' and the deny
		// rules' readings disagreed, each engine keeping the stricter: a
		// shell skips a lone "-" before -c's code; a module option does not
		// give the program; awk's program text comes before its options;
		// deno eval runs code and deno run a script; env takes any
		// NAME=value; runuser -u's operands are a command; awk -v after the
		// program still hands a value in.
		"sh -c - {{x}}",
		`sh -c - 'eval "$1"' _ {{x}}`,
		"perl -Mstrict {{x}}",
		"node -r dotenv/config {{x}}",
		"ruby -r json {{x}}",
		"php -d x=1 {{x}}",
		"lua -l x {{x}}",
		"awk {{x}} -f prog.awk",
		"deno eval {{x}}",
		"deno run {{x}}",
		"env a-b=1 sh -c {{x}}",
		"runuser -u root {{x}}",
		"awk '{system($0)}' f -v a={{x}}",
		// A code option's value attached to it is read like one in the
		// next word; so is xargs' replacement string, which input items
		// replace in its command, the program name too.
		"tar -xf a.tar --to-command={{x}}",
		"rsync --rsh={{x}} a b:",
		"ssh -oProxyCommand={{x}} host",
		"xargs -I {{x}} echo hi",
		// Other programs' code options are the grammar's (they were a
		// table of their own): clusters, tar's kin, man and zip too.
		"psql -Atc {{x}}",
		"gtar --to-command {{x}} -xf a",
		"man -P {{x}} ls",
		"zip -TT {{x}} a.zip f",
		// Kept from the templates' reading: sh - SCRIPT counts "-" as the
		// script (standard input), watch -x still joins, su - USER counts
		// "-" as the user.
		"sh - script.sh {{x}}",
		"watch -x ls {{x}}",
		"su - {{x}}",
	} {
		if err := ValidateShell(cmd); err == nil {
			t.Errorf("ValidateShellTemplate(%q) = nil, want refused", cmd)
		}
	}
	for _, cmd := range []string{
		"perl -I lib script.pl {{x}}",
		"ruby -I lib script.rb {{x}}",
		"php script.php {{x}}",
		"sudo -u {{user}} id",
		"ssh -o BatchMode=yes {{host}} uptime",
		"perl -Mstrict script.pl {{x}}",
		"python3 -m http.server {{x}}",
		"deno run app.ts {{x}}",
		"env a-b=1 ls {{x}}",
		"awk -f prog.awk {{x}}",
		"gdb -p {{pid}} -batch -ex bt",
		"make -C {{dir}} all",
		"man {{page}}",
	} {
		if err := ValidateShell(cmd); err != nil {
			t.Errorf("ValidateShellTemplate(%q) = %v, want accepted", cmd, err)
		}
	}
}
