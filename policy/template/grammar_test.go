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
	} {
		if err := ValidateShell(cmd); err != nil {
			t.Errorf("ValidateShellTemplate(%q) = %v, want accepted", cmd, err)
		}
	}
}
