package shell

import (
	"regexp"
	"sort"
	"strings"

	"github.com/toolcage/toolcage/errdefs"
)

// The environment.
//
// A command's environment is built from nothing: the call's own variables
// plus PATH (the fixed one), HOME (the call's working directory) and
// LANG=C.UTF-8. Nothing of the executor's environment is inherited.
//
// The call may set LANG (and any LC_*), but not PATH or HOME: those are the
// executor's to decide, and a PATH of the tool's choosing would let a deny
// rule on a command name be dodged by a look-alike. Names must look like
// shell variable names, and names that make a program run code other than
// what the command says are refused: the dynamic loader's variables, the
// shell's startup and parsing hooks, the C library's lookup paths and the
// option variables of common interpreters. The list is about injection by
// the back door; a tool author who wants to run a library can say so in
// the command, where the deny rules see it.

// envName is what a variable name must look like.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedEnv are set by the executor and may not be set by a call.
var reservedEnv = map[string]bool{"PATH": true, "HOME": true}

// deniedEnvPrefixes are refused as a whole family.
var deniedEnvPrefixes = []string{
	"LD_",        // glibc and musl dynamic loader: LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH …
	"DYLD_",      // the macOS dynamic loader
	"BASH_FUNC_", // bash's exported functions
}

// deniedEnv are refused one by one.
var deniedEnv = map[string]bool{
	// Shell startup and parsing.
	"BASH_ENV": true, "ENV": true, "PROMPT_COMMAND": true, "IFS": true,
	"SHELLOPTS": true, "BASHOPTS": true, "PS4": true, "CDPATH": true,
	"GLOBIGNORE": true, "BASH_XTRACEFD": true, "INPUTRC": true,
	// The C library: files it loads code or tables from (glibc drops
	// these for set-uid programs for the same reason).
	"GCONV_PATH": true, "GETCONF_DIR": true, "HOSTALIASES": true,
	"LOCALDOMAIN": true, "LOCPATH": true, "MALLOC_TRACE": true,
	"NIS_PATH": true, "NLSPATH": true, "RESOLV_HOST_CONF": true,
	"RES_OPTIONS": true,
	// Interpreters that load code named in their environment.
	"PERL5LIB": true, "PERL5OPT": true, "PERLLIB": true,
	"PYTHONPATH": true, "PYTHONSTARTUP": true, "PYTHONHOME": true,
	"PYTHONINSPECT": true, "RUBYOPT": true, "RUBYLIB": true,
	"NODE_OPTIONS": true, "NODE_PATH": true,
	"JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true,
}

// checkEnv refuses a call's environment if any name is malformed, reserved
// or dangerous (policy_denied), or any value holds a NUL byte
// (invalid_arguments). Names are checked in sorted order, so the error is
// the same every time.
func checkEnv(env map[string]string) error {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if reason := envRefusal(k); reason != "" {
			return errdefs.Errorf(errdefs.PolicyDenied, "shell: environment variable %q is not allowed: %s", k, reason)
		}
		if strings.IndexByte(env[k], 0) >= 0 {
			return errdefs.Errorf(errdefs.InvalidArguments, "shell: environment variable %q contains a NUL byte", k)
		}
	}
	return nil
}

// envRefusal says why name may not be set, or "" if it may.
func envRefusal(name string) string {
	if !envName.MatchString(name) {
		return "not a valid variable name"
	}
	if reservedEnv[name] {
		return "set by the executor"
	}
	if deniedEnv[name] {
		return "it can make programs run other code"
	}
	for _, p := range deniedEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return "it can make programs run other code"
		}
	}
	return ""
}

// buildEnv returns the environment for a command working in dir, sorted
// by name. env has passed checkEnv.
func buildEnv(env map[string]string, dir string) []string {
	all := map[string]string{"LANG": "C.UTF-8"}
	for k, v := range env {
		all[k] = v
	}
	all["PATH"] = fixedPath
	all["HOME"] = dir
	out := make([]string, 0, len(all))
	for k, v := range all {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
