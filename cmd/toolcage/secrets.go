package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

// maxSecretBytes bounds a value read from stdin.
const maxSecretBytes = 1 << 20

// secretsCommand is the secrets noun. Values go in on stdin only: never a
// flag or argument, which would land in shell history and ps.
func secretsCommand() *cli.Command {
	return &cli.Command{
		Name:  "secrets",
		Usage: "set, list and remove the secrets tools use as {{secret.NAME}}",
		UsageText: `toolcage secrets command [command options] [arguments...]

Examples:
   printf %s "$GITHUB_TOKEN" | toolcage secrets set github_token
   toolcage secrets list
   toolcage secrets rm github_token
   toolcage secrets rotate`,
		Description: `Secrets are stored encrypted by the daemon. A tool may use only the secrets
its definition lists under secrets:, and their values are redacted from
results, logs, errors and the audit log. No command ever prints a value.`,
		Subcommands: []*cli.Command{secretsSetCommand(), secretsListCommand(), secretsRmCommand(), secretsRotateCommand()},
	}
}

// secretName returns the one NAME argument.
func secretName(cCtx *cli.Context) (string, error) {
	switch n := cCtx.NArg(); {
	case n == 0:
		return "", usageErrorf(cCtx, "missing the secret NAME")
	case n > 1:
		return "", usageErrorf(cCtx, "unexpected argument %q: give one secret NAME (the value is read from stdin)", cCtx.Args().Get(1))
	}
	return cCtx.Args().First(), nil
}

func secretsSetCommand() *cli.Command {
	return &cli.Command{
		Name:      "set",
		Usage:     "store a secret, reading its value from stdin",
		ArgsUsage: "NAME",
		UsageText: `toolcage secrets set NAME < value-file

Examples:
   printf %s "$API_TOKEN" | toolcage secrets set api_token
   toolcage secrets set api_token < token.txt`,
		Description: `Reads all of stdin as the value (one trailing newline is dropped) and stores
it under NAME, replacing any earlier value. NAME must match ^[a-z][a-z0-9_]*$.
The value is never taken from a flag or argument. When stdin is a terminal
the command refuses rather than echo what you type: pipe the value in.`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			name, err := secretName(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runSecretsSet(cCtx.Context, a, name, a.jsonOut(cCtx))
		},
	}
}

func runSecretsSet(ctx context.Context, a *app, name string, jsonOut bool) error {
	if f, ok := a.in.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			// golang.org/x/term is not a dependency, so there is no
			// prompt with echo off; reading a terminal would echo.
			return inputErrorf("stdin is a terminal and this build cannot read without echo; pipe the value in: printf %%s \"$VALUE\" | toolcage secrets set %s", name)
		}
	}
	b, err := io.ReadAll(io.LimitReader(a.in, maxSecretBytes+1))
	if err != nil {
		return inputErrorf("reading the secret from stdin: %v", err)
	}
	defer clear(b)
	if len(b) > maxSecretBytes {
		return inputErrorf("the secret on stdin is larger than %d bytes", maxSecretBytes)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return inputErrorf("stdin was empty: pipe the secret's value in, e.g. printf %%s \"$VALUE\" | toolcage secrets set %s", name)
	}
	raw, err := a.request(ctx, http.MethodPut, "/v1/secrets/"+api.PathEscape(name), api.SecretValue{Value: &v}, nil)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw) // 204: nothing
	}
	_, err = fmt.Fprintf(a.out, "Set secret %s\n", name)
	return err
}

func secretsListCommand() *cli.Command {
	return &cli.Command{
		Name:    "list",
		Aliases: []string{"ls"},
		Usage:   "list secrets (names, times and the tools that use them; never values)",
		UsageText: `toolcage secrets list [--json]

Example:
   toolcage secrets list`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			return runSecretsList(cCtx.Context, a, a.jsonOut(cCtx))
		},
	}
}

func runSecretsList(ctx context.Context, a *app, jsonOut bool) error {
	var list api.SecretList
	raw, err := a.request(ctx, http.MethodGet, "/v1/secrets", nil, &list)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw)
	}
	tw := newTable(a.out)
	row(tw, "NAME", "CREATED", "UPDATED", "USED_BY")
	for _, s := range list.Secrets {
		row(tw, s.Name, formatTime(s.CreatedAt, a.loc), formatTime(s.UpdatedAt, a.loc), orDash(strings.Join(s.UsedBy, ",")))
	}
	return tw.Flush()
}

func secretsRmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Aliases:   []string{"delete"},
		Usage:     "remove a secret",
		ArgsUsage: "NAME",
		UsageText: `toolcage secrets rm NAME

Example:
   toolcage secrets rm api_token`,
		Description: `Removes the secret. Tools that list it keep their definitions; their calls
are refused until it is set again.`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			name, err := secretName(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runSecretsRm(cCtx.Context, a, name, a.jsonOut(cCtx))
		},
	}
}

func runSecretsRm(ctx context.Context, a *app, name string, jsonOut bool) error {
	raw, err := a.request(ctx, http.MethodDelete, "/v1/secrets/"+api.PathEscape(name), nil, nil)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw) // 204: nothing
	}
	_, err = fmt.Fprintf(a.out, "Removed secret %s\n", name)
	return err
}

func secretsRotateCommand() *cli.Command {
	return &cli.Command{
		Name:  "rotate",
		Usage: "replace the key that encrypts secrets, re-encrypting every secret",
		UsageText: `toolcage secrets rotate [--json]

Example:
   toolcage secrets rotate`,
		Description: `The daemon makes a new random key, writes it to <key_file>.new, re-encrypts
every stored secret under it in one transaction, renames the new file over
the key file and starts using it. If any step before the rename fails,
nothing changes and the old key stays in force. Back the new key file up:
backups of the old one no longer open the secrets. Only a person may rotate.`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			return runSecretsRotate(cCtx.Context, a, a.jsonOut(cCtx))
		},
	}
}

func runSecretsRotate(ctx context.Context, a *app, jsonOut bool) error {
	var rot api.SecretsRotation
	raw, err := a.request(ctx, http.MethodPost, "/v1/secrets/rotate", nil, &rot)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw)
	}
	_, err = fmt.Fprintf(a.out, "Rotated the secrets key: %d secrets re-encrypted; the new key is in %s (back it up)\n", rot.Secrets, rot.KeyFile)
	return err
}
