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
var codeEnvNames = shellsyntax.WordSet(strings.Join([]string{
	// Shells: start-up files, prompts (expanded, so $(...) runs), option
	// sets, word splitting, the search paths and the home directory.
	"ENV BASH_ENV ZDOTDIR PS2 PS3 SHELLOPTS BASHOPTS IFS CDPATH PATH HOME SHELL HISTFILE INPUTRC FPATH",
	// Pager options and key bindings.
	"LESS LESSKEY LESSKEYIN",
	// The C library and dynamic loader load code they name.
	"GCONV_PATH LOCPATH NLSPATH HOSTALIASES RESOLV_HOST_CONF",
	// Interpreters and runtimes: options and load paths.
	"CLASSPATH PHPRC PHP_INI_SCAN_DIR TCLLIBPATH R_PROFILE R_PROFILE_USER ERL_AFLAGS ERL_FLAGS ELIXIR_ERL_OPTIONS",
	// Tools that read configuration, credentials or a daemon address that
	// decides what they run or where.
	"TMPDIR XDG_CONFIG_HOME XDG_DATA_HOME XDG_CONFIG_DIRS XDG_DATA_DIRS",
	"http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy",
	"KUBECONFIG DOCKER_HOST DOCKER_CONFIG MAKEFLAGS MFLAGS GNUPGHOME CURL_HOME WGETRC SSH_AUTH_SOCK",
	"GOFLAGS GOPATH GOROOT GOPROXY GOTOOLCHAIN GOENV CC CXX CPP LD AR CFLAGS CXXFLAGS",
	"CPPFLAGS LDFLAGS PKG_CONFIG_PATH SQLITE_HISTORY",
}, " "))

// codeEnvPrefixes are families of such variables: the dynamic loader, bash
// exported functions, git (commands, config, repository), interpreters'
// options and load paths, package managers and build tools.
var codeEnvPrefixes = strings.Fields(`LD_ DYLD_ BASH_ GIT_ PYTHON PERL RUBY NODE_ NPM_ npm_config_ JAVA_ _JAVA_ JDK_
	LUA_ PHP DOTNET_ GEM_ BUNDLE_ CARGO_ RUSTC RUSTFLAGS RUSTDOC SSL_ OPENSSL_ YARN_ PIP_ UV_ POETRY_ CONDA MAVEN_
	GRADLE_ SBT_ ANT_ DENO_ BUN_ LESS SYSTEMD_ DOCKER_ KUBE HELM_ TF_CLI_ AWS_CONFIG AWS_SHARED`)

// codeEnvSuffixes are the class of variables a program reads options or
// code from, whatever the program: FOO_OPTS, FOO_FLAGS, FOO_PRELOAD... (the
// class it runs, FOO_COMMAND, FOO_PAGER..., is shellsyntax.EnvRuns').
var codeEnvSuffixes = strings.Fields(`_OPTS _OPTIONS _FLAGS _PROG _WRAPPER _EXEC _PS1 _PROMPT _HISTORY _HISTFILE
	_PRELOAD _LAUNCHER _INTERPRETER _HELPER _DIFF _MERGE`)

// CodeEnv reports whether programs run name's value, read it as code or
// options, or load code from where it points (LD_PRELOAD, PYTHONPATH,
// GIT_CONFIG_*, PAGER...).
func CodeEnv(name string) bool {
	upper := strings.ToUpper(name)
	return codeEnvNames[name] || shellsyntax.EnvRuns(name) ||
		slices.ContainsFunc(codeEnvPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) ||
		slices.ContainsFunc(codeEnvSuffixes, func(s string) bool { return strings.HasSuffix(upper, s) }) ||
		// Bash imports older name() forms as functions too
		// (BASH_FUNC_name%% is EnvRuns').
		strings.HasSuffix(name, "()")
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
	if i := slices.IndexFunc(t.phs, func(p Placeholder) bool { return !p.Secret }); i >= 0 && CodeEnv(name) {
		return errorAt(value, t.phs[i].Offset, "an argument may not set %s: programs run it, read it as code or options, or load code from it", name)
	}
	return nil
}
