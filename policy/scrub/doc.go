// Package scrub finds credentials in text and replaces them with
// [REDACTED:kind] markers: the values a call is known to use (in every
// escaped form a client decodes), our own rules for key formats and
// password fields, and gitleaks' rule set, behind one keyword pass.
package scrub
