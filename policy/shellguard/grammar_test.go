package shellguard

import (
	"strings"
	"testing"
)

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
		// The reader (shellsyntax.Read) where the deny rules' and the
		// templates' readings disagreed, each engine keeping the stricter:
		// "-" is an interpreter's standard input (it was skipped); perl
		// reads options after -e; flock's options after its file; env
		// takes any NAME=value; -m does not end python's code options;
		// deno eval runs code (its operand was read as a file name).
		{`echo 'import shutil; shutil.rmtree("/")' | python3 - arg`, "destructive_file_ops/interpreter_remove_tree"},
		{`echo 'rm -rf /' > x.sh; sh - x.sh`, "destructive_file_ops/rm_recursive_critical"},
		{`perl -e 1 '-MPOSIX;system("rm -rf /")'`, "destructive_file_ops/rm_recursive_critical"},
		{`flock /tmp/l -w 5 rm -rf /`, "destructive_file_ops/rm_recursive_critical"},
		{`/usr/bin/env a-b=1 rm -rf /`, "destructive_file_ops/rm_recursive_critical"},
		{`python3 -m x -c 'import shutil; shutil.rmtree("/")'`, "destructive_file_ops/interpreter_remove_tree"},
		{`deno eval 'Deno.run({cmd: ["rm", "-rf", "/"]})'`, "destructive_file_ops/rm_recursive_critical"},
		{`echo '{}' | python3 -m json.tool`, "allow"},
		// Variables that programs run are one list (shellsyntax.EnvRuns,
		// which the daemon checks a tool's env: with), read as the command
		// they run (LESSOPEN's |cmd, an exported function's body).
		{`LESSOPEN='|rm -rf / %s' less notes.txt`, "destructive_file_ops/rm_recursive_critical"},
		{`env GIT_EXTERNAL_DIFF='rm -rf /' git diff`, "destructive_file_ops/rm_recursive_critical"},
		{`MY_TOOL_CMD='rm -rf /' make`, "destructive_file_ops/rm_recursive_critical"},
		{`env 'BASH_FUNC_ls%%=() { rm -rf /; }' bash -c ls`, "destructive_file_ops/rm_recursive_critical"},
		{`env X='$(rm -rf /)' true`, "destructive_file_ops/rm_recursive_critical"},
		{`PS1='rm -rf /' bash -i`, "destructive_file_ops/rm_recursive_critical"},
		{`EDITOR=vim git commit`, "allow"},
		// Other programs' code options are the grammar's too (vim -c,
		// make -f, tar --to-command, gdb -ex...): clusters and values in
		// their own word are read like the rest.
		{`make -sf <(printf 'a:\n\trm -rf /\n')`, "destructive_file_ops/rm_recursive_critical"},
		{`bmake -f <(printf 'a:\n\trm -rf /\n')`, "destructive_file_ops/rm_recursive_critical"},
		{`vim -Rc ':!rm -rf /'`, "destructive_file_ops/rm_recursive_critical"},
		{`rsync -avze 'sh -c "rm -rf /"' a b:`, "destructive_file_ops/rm_recursive_critical"},
		{`tar cf /dev/null x --checkpoint=1 --checkpoint-action exec='rm -rf /'`, "destructive_file_ops/rm_recursive_critical"},
		{`gdb -iex 'shell rm -rf /'`, "destructive_file_ops/rm_recursive_critical"},
		{`tar cf /dev/null x --checkpoint-action=echo`, "allow"},
		{`gdb -batch -ex bt ./app`, "allow"},
		{`sudo -l rm -rf /`, "privilege_escalation/sudo"},
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

// TestReaderCommands: what su, sg and runuser run, as the exec rules see
// it (the reader finds their code and commands for the deny rules).
func TestReaderCommands(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{`sg - grp 'rm -rf /'`, "sg rm"},
		{`sg grp -c 'rm -rf /'`, "sg rm"},
		{`su - root -c 'rm -rf /'`, "su rm"},
		{`su root -lc 'rm -rf /'`, "su rm"},
		{`runuser -u nobody -- rm -rf /`, "runuser rm"},
		{`watch -x sh -c 'rm -rf /'`, "watch rm"},
		{`trap - INT`, "trap"},
		{`xargs -I{} sh -c 'rm -rf {}' <<< /`, "xargs rm"},
	} {
		cs, err := Commands(tc.cmd)
		var names []string
		for _, c := range cs {
			names = append(names, c.Name)
		}
		if got := strings.Join(names, " "); err != nil || got != tc.want {
			t.Errorf("Commands(%q) = %q, %v; want %q", tc.cmd, got, err, tc.want)
		}
	}
}
