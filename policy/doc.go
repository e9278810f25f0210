// Package policy holds the per-call decisions that are not about a
// command's or a template's text: tool profiles (which caller may use which
// tool) and rate limits. The shell deny rules are in policy/shellguard, the
// templates in policy/template, the network guard in policy/netguard.
package policy
