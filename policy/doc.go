// Package policy holds the per-call decisions that are not about a
// command's or a template's text: tool profiles (which caller may use which
// tool), rate limits, the bounds on a call's arguments (CheckArguments),
// and whether a tool an agent makes waits for a person (StartsPending). The shell deny rules are in policy/shellguard, the
// templates in policy/template, the network guard in policy/netguard.
package policy
