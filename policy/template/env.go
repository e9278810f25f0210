package template

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// The environment of a shell tool (its env: block, or NAME=value words in
// its command) reaches programs without passing a shell's parser, but many
// variables are code all the same: a program runs them (GIT_SSH_COMMAND,
// PAGER), a shell reads them at start-up (BASH_ENV, PROMPT_COMMAND), or
// they decide what code a program loads (LD_PRELOAD, NODE_OPTIONS). An
// argument may not set them, and a fixed value of one that runs is checked
// like a command (shellsyntax.EnvCommand). An approval shows the environment with the
// argv, so a person sees what such a variable would run.

// codeEnvNames are variables that programs read as code or options, or
// load code from, by group (those they run are shellsyntax.EnvRuns').
var codeEnvNames = map[string]bool{
	// Shells: start-up files, prompts (expanded, so $(...) runs), option
	// sets, word splitting, the search paths and the home directory.
	"ENV": true, "BASH_ENV": true, "ZDOTDIR": true, "PS2": true, "PS3": true,
	"SHELLOPTS": true, "BASHOPTS": true, "IFS": true, "CDPATH": true,
	"PATH": true, "HOME": true, "SHELL": true, "HISTFILE": true, "INPUTRC": true, "FPATH": true,
	// Pager options and key bindings.
	"LESS": true, "LESSKEY": true, "LESSKEYIN": true,
	// The C library and dynamic loader load code they name.
	"GCONV_PATH": true, "LOCPATH": true, "NLSPATH": true, "HOSTALIASES": true, "RESOLV_HOST_CONF": true,
	// Interpreters and runtimes: options and load paths.
	"CLASSPATH": true, "PHPRC": true, "PHP_INI_SCAN_DIR": true, "TCLLIBPATH": true, "R_PROFILE": true,
	"R_PROFILE_USER": true, "ERL_AFLAGS": true, "ERL_FLAGS": true, "ELIXIR_ERL_OPTIONS": true,
	// Tools that read configuration, credentials or a daemon address that
	// decides what they run or where.
	"TMPDIR": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_CONFIG_DIRS": true, "XDG_DATA_DIRS": true,
	"http_proxy": true, "https_proxy": true, "HTTP_PROXY": true, "HTTPS_PROXY": true, "ALL_PROXY": true, "all_proxy": true,
	"KUBECONFIG": true, "DOCKER_HOST": true, "DOCKER_CONFIG": true, "MAKEFLAGS": true, "MFLAGS": true, "GNUPGHOME": true,
	"CURL_HOME": true, "WGETRC": true, "SSH_AUTH_SOCK": true,
	"GOFLAGS": true, "GOPATH": true, "GOROOT": true, "GOPROXY": true, "GOTOOLCHAIN": true, "GOENV": true,
	"CC": true, "CXX": true, "CPP": true, "LD": true, "AR": true, "CFLAGS": true, "CXXFLAGS": true,
	"CPPFLAGS": true, "LDFLAGS": true, "PKG_CONFIG_PATH": true, "SQLITE_HISTORY": true,
}

// codeEnvPrefixes are families of such variables: the dynamic loader, bash
// exported functions, git (commands, config, repository), interpreters'
// options and load paths, package managers and build tools.
var codeEnvPrefixes = []string{
	"LD_", "DYLD_", "BASH_", "GIT_", "PYTHON", "PERL", "RUBY", "NODE_", "NPM_", "npm_config_", "JAVA_", "_JAVA_",
	"JDK_", "LUA_", "PHP", "DOTNET_", "GEM_", "BUNDLE_", "CARGO_", "RUSTC", "RUSTFLAGS", "RUSTDOC", "SSL_",
	"OPENSSL_", "YARN_", "PIP_", "UV_", "POETRY_", "CONDA", "MAVEN_", "GRADLE_", "SBT_", "ANT_", "DENO_", "BUN_",
	"LESS", "SYSTEMD_", "DOCKER_", "KUBE", "HELM_", "TF_CLI_", "AWS_CONFIG", "AWS_SHARED",
}

// codeEnvSuffixes are the class of variables a program reads options or
// code from, whatever the program: FOO_OPTS, FOO_FLAGS, FOO_PRELOAD... (the
// class it runs, FOO_COMMAND, FOO_PAGER..., is shellsyntax.EnvRuns').
var codeEnvSuffixes = []string{
	"_OPTS", "_OPTIONS", "_FLAGS", "_PROG", "_WRAPPER", "_EXEC", "_PS1", "_PROMPT", "_HISTORY", "_HISTFILE",
	"_PRELOAD", "_LAUNCHER", "_INTERPRETER", "_HELPER", "_DIFF", "_MERGE",
}

// CodeEnv reports whether programs run name's value, read it as code or
// options, or load code from where it points (LD_PRELOAD, PYTHONPATH,
// GIT_CONFIG_*, PAGER...).
func CodeEnv(name string) bool { return codeEnv(name) }

// codeEnv reports whether programs run name's value, read it as code or
// options, or load code from where it points.
func codeEnv(name string) bool {
	if codeEnvNames[name] || shellsyntax.EnvRuns(name) {
		return true
	}
	upper := strings.ToUpper(name)
	if slices.ContainsFunc(codeEnvPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) ||
		slices.ContainsFunc(codeEnvSuffixes, func(s string) bool { return strings.HasSuffix(upper, s) }) {
		return true
	}
	// Bash imports older name() forms as functions too (BASH_FUNC_name%%
	// is EnvRuns').
	return strings.HasSuffix(name, "()")
}

// ValidateShellEnv checks one entry of a shell tool's env: block when the
// tool is created: the value must be a valid template, and an argument
// ({{.name}}) may not appear in a variable that programs run, read as
// code or options, or load code from. A secret ({{secret.NAME}}) may: the
// operator chose it.
func ValidateShellEnv(name, value string) error {
	if name == "" || strings.ContainsAny(name, "=\x00") {
		return fmt.Errorf("env: %q is not a variable name", name)
	}
	t, err := Parse(value)
	if err != nil {
		return err
	}
	if !codeEnv(name) {
		return nil
	}
	for _, p := range t.Placeholders() {
		if !p.Secret {
			return errorAt(value, p.Offset, "an argument may not set %s: programs run it, read it as code or options, or load code from it", name)
		}
	}
	return nil
}
