package policy

// Caller types, as principal.Caller and the store write them.
const (
	CallerUser = "user"
	CallerLLM  = "llm"
)

// KindJS is the one kind an agent's tool may be without a person's look:
// its code runs in the JavaScript sandbox with no shell and no host access
// beyond what permissions grant.
const KindJS = "js"

// StartsPending reports whether a tool created or changed by a caller of
// callerType waits for a person's approval (pending_approval) instead of
// being active at once. A person's tool never waits. An agent's tool
// (callerType other than user: unknown types fail closed) waits unless it is
// JavaScript with no permissions and no secrets; alwaysPending makes every
// agent's tool wait. Why so strict: a shell or http tool, any permission or
// any secret lets the code reach past the sandbox (a secret can leave
// reversed or in a header the scrubber cannot see), so a person reads it
// first.
func StartsPending(kind string, permissions, secrets []string, callerType string, alwaysPending bool) bool {
	if callerType == CallerUser {
		return false
	}
	return alwaysPending || kind != KindJS || len(permissions) > 0 || len(secrets) > 0
}
