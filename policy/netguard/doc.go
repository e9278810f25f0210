// Package netguard is the network guard: it decides which URLs and which
// socket addresses a tool's HTTP requests may reach (allowlist, private and
// metadata addresses refused, checked again at dial time after DNS), and
// builds the guarded HTTP clients. Executors link it; they link no other
// guard of policy's but the JS check.
package netguard
