package policy

import "testing"

// TestShellGrammarDecisions pins the readings decided where the deny
// rules' and the templates' tables used to disagree (shellgrammar.go).
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
		if err := ValidateShellTemplate(cmd); err == nil {
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
		if err := ValidateShellTemplate(cmd); err != nil {
			t.Errorf("ValidateShellTemplate(%q) = %v, want accepted", cmd, err)
		}
	}
	rs := loadDefaultShellRules(t)
	for _, tc := range []struct{ cmd, want string }{
		{`perl '-MPOSIX;system("rm -rf /")' -e 1`, "destructive_file_ops/rm_recursive_critical"},
		{`perl -MPOSIX -e 'print 1'`, "allow"},
		{`php -d 'auto_prepend_file=system("rm -rf /");' -r 'echo 1;'`, "destructive_file_ops/rm_recursive_critical"},
		{`php -d memory_limit=1G -r 'echo 1;'`, "allow"},
		{"echo 'BEGIN { system(\"rm -rf /\") }' > p.awk; awk -f p.awk", "destructive_file_ops/rm_recursive_critical"},
		{`awk -f prog.awk data.txt`, "allow"},
		{`sudo -s rm -rf /`, "privilege_escalation/sudo"},
		{`ssh -o BatchMode=yes host rm -rf /`, "destructive_file_ops/rm_recursive_critical"},
		{`ionice -p 1234`, "allow"},
	} {
		got := "allow"
		if err := rs.CheckCommand(tc.cmd); err != nil {
			got = shellRuleID(err)
		}
		if got != tc.want {
			t.Errorf("CheckCommand(%q) = %s, want %s", tc.cmd, got, tc.want)
		}
	}
}
