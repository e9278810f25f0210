package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"
)

// The bash and zsh scripts ask the binary itself for the words that may
// follow (urfave's hidden --generate-bash-completion), so they stay right
// as commands change. Unlike urfave's sample scripts they run the typed
// words as an argument list, never through eval: a $(...) on a half-typed
// command line is not run by pressing Tab.
const bashCompletion = `# bash completion for toolcage; load with: source <(toolcage completion bash)
_toolcage() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  local -a words=("${COMP_WORDS[@]:0:COMP_CWORD}")
  local opts
  if [[ "$cur" == -* ]]; then
    opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
  fi
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _toolcage toolcage
`

const zshCompletion = `#compdef toolcage
# zsh completion for toolcage; load with: source <(toolcage completion zsh)
_toolcage() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(_CLI_ZSH_AUTOCOMPLETE_HACK=1 ${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(_CLI_ZSH_AUTOCOMPLETE_HACK=1 ${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _toolcage toolcage
`

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		UsageText: `toolcage completion bash|zsh|fish

Examples:
   source <(toolcage completion bash)                  # this shell
   toolcage completion bash > /etc/bash_completion.d/toolcage
   toolcage completion zsh > "${fpath[1]}/_toolcage"
   toolcage completion fish > ~/.config/fish/completions/toolcage.fish`,
		Action: func(cCtx *cli.Context) error {
			if cCtx.NArg() != 1 {
				return usageErrorf(cCtx, "want one shell: bash, zsh or fish")
			}
			// A fresh tree: the running one holds urfave's shared help
			// command, whose subcommand lists grow with every run in one
			// process until fish's walk of them never ends.
			a := appOf(cCtx)
			return runCompletion(a.out, newCLI(&app{out: a.out, err: a.err}), cCtx.Args().First(), cCtx)
		},
	}
}

func runCompletion(w io.Writer, root *cli.App, shell string, cCtx *cli.Context) error {
	var script string
	switch shell {
	case "bash":
		script = bashCompletion
	case "zsh":
		script = zshCompletion
	case "fish":
		s, err := root.ToFishCompletion()
		if err != nil {
			return fmt.Errorf("fish completion: %w", err)
		}
		script = s
	default:
		return usageErrorf(cCtx, "unknown shell %q: want bash, zsh or fish", shell)
	}
	_, err := io.WriteString(w, script)
	return err
}

// manCommand prints the man page (roff), for 'make man'.
func manCommand() *cli.Command {
	return &cli.Command{
		Name:   "man",
		Usage:  "print the toolcage(1) man page in roff",
		Hidden: true,
		UsageText: `toolcage man > toolcage.1

   'make man' writes it to docs/man/toolcage.1.`,
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			page, err := newCLI(&app{out: a.out, err: a.err}).ToManWithSection(1) // fresh: see completionCommand
			if err != nil {
				return fmt.Errorf("man page: %w", err)
			}
			_, err = io.WriteString(a.out, page)
			return err
		},
	}
}
