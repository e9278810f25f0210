package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon"
)

func TestToolsListProfileAndCallRefused(t *testing.T) {
	t.Parallel()
	ld := launchDaemon(t, func(c *daemon.Config) {
		c.Profiles = daemon.ProfilesConfig{
			Groups: map[string]daemon.ToolGroupConfig{"shell": {Categories: []string{"shell"}}},
			Profiles: map[string]daemon.ProfileConfig{
				"no_shell": {Deny: []string{"group:shell"}},
				"add_back": {Deny: []string{"group:shell"}, AlsoAllow: []string{"say_hi"}},
			},
			Callers: map[string]string{"agent1": "no_shell"},
		}
	})
	sock := ld.socket
	createTool(t, sock, "name: say_hi\ndescription: d\nkind: shell\ncategory: shell\nshell: {command: echo hi}\n")
	createTool(t, sock, "name: list_root\ndescription: d\nkind: shell\ncategory: shell\nshell: {command: \"true\"}\n")
	createTool(t, sock, jsDef("word_count", "return 1"))

	names := func(out string) string {
		var n []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			n = append(n, strings.Fields(l)[0])
		}
		return strings.Join(n, ",")
	}
	if got := names(mustOK(t, sock, "tools", "list", "--profile", "no_shell").out); got != "word_count" {
		t.Fatalf("no_shell: %q", got)
	}
	if got := names(mustOK(t, sock, "tools", "list", "--profile", "add_back").out); got != "say_hi,word_count" {
		t.Fatalf("add_back: %q", got)
	}
	if got := names(mustOK(t, sock, "tools", "list").out); got != "list_root,say_hi,word_count" {
		t.Fatalf("all: %q", got)
	}
	wantExit(t, tc(t, sock, "tools", "list", "--profile", "ghost"), exitUsage, `no tool profile named "ghost"`)

	wantExit(t, tc(t, sock, "--caller-id", "agent1", "call", "say_hi"), exitRefused, "policy_denied", `"no_shell"`)
	mustOK(t, sock, "--caller-id", "agent1", "call", "word_count")
	mustOK(t, sock, "call", "say_hi")
}

func TestSecretsRotateCLI(t *testing.T) {
	t.Parallel()
	ld := launchDaemon(t, nil)
	sock := ld.socket
	keyFile := filepath.Join(ld.dataDir, "secrets.key")
	before, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if r := tcIn(t, sock, cliSecret, "secrets", "set", "api_token"); r.code != exitOK {
		t.Fatal(r)
	}
	createTool(t, sock, `name: token_len
description: d
kind: shell
secrets: [api_token]
shell:
  command: "sh -c 'printf %s \"$TOKEN\" | wc -c'"
  env: {TOKEN: "{{secret.api_token}}"}
`)
	wantExit(t, tc(t, sock, "--caller-type", "llm", "secrets", "rotate"), exitRefused, "only a person")
	r := mustOK(t, sock, "secrets", "rotate")
	if !strings.Contains(r.out, "1 secrets re-encrypted") || !strings.Contains(r.out, keyFile) {
		t.Fatalf("rotate: %v", r)
	}
	after, err := os.ReadFile(keyFile)
	if err != nil || len(after) != 32 || bytes.Equal(before, after) {
		t.Fatalf("key file not replaced: %v", err)
	}
	if out := mustOK(t, sock, "call", "token_len").out; !strings.Contains(out, "24") {
		t.Fatalf("call after rotation: %s", out)
	}
	wantExit(t, tc(t, sock, "secrets", "rotate", "extra"), exitUsage)
}
