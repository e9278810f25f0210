// Package boundary holds no code: its test asserts the import boundaries the
// architecture fixes (which packages may link which), so they cannot regress
// unnoticed.
package boundary
