package shellguard

import "testing"

// TestShellGrammarDecisions pins the readings decided where the deny
// rules' and the templates' tables used to disagree (policy/shellsyntax,
// grammar.go); the templates' half is in policy/template.
func TestShellGrammarDecisions(t *testing.T) {
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
			got = ruleID(err)
		}
		if got != tc.want {
			t.Errorf("CheckCommand(%q) = %s, want %s", tc.cmd, got, tc.want)
		}
	}
}
