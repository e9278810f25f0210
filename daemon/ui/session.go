package ui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"
)

// Login tokens and sessions, in memory only: a daemon restart logs every
// browser out, and `toolcage ui open` mints a new link. Both are random
// 256-bit values kept by their sha256, so neither a map's timing nor a
// memory dump of the table gives a usable one back.

const (
	// maxLogins bounds the login tokens not yet used; minting one more
	// drops the oldest.
	maxLogins = 16
	// maxSessions bounds the live sessions; a new login ends the oldest.
	maxSessions = 32
	// tokenBytes is the entropy of a login token, a session cookie and a
	// CSRF token.
	tokenBytes = 32
)

// newToken returns tokenBytes random bytes, base64url without padding.
func newToken() string {
	var b [tokenBytes]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func hashToken(t string) [32]byte { return sha256.Sum256([]byte(t)) }

// login is a minted, unused login token.
type login struct {
	person  string // the caller id of who minted it
	expires time.Time
	minted  time.Time
}

// session is a logged-in browser.
type session struct {
	// label names the session in logs and the admin log ("ui-" and 8
	// characters of an id unrelated to the cookie).
	label   string
	person  string
	csrf    string
	expires time.Time
	started time.Time
	// flash is one message for the next page shown (set by an action).
	flash      string
	flashError bool
}

// sessions holds the login tokens and the sessions. Safe for concurrent use.
type sessions struct {
	loginTTL, sessionTTL time.Duration
	now                  func() time.Time

	mu     sync.Mutex
	logins map[[32]byte]*login
	live   map[[32]byte]*session
}

func newSessions(loginTTL, sessionTTL time.Duration, now func() time.Time) *sessions {
	if now == nil {
		now = time.Now
	}
	return &sessions{loginTTL: loginTTL, sessionTTL: sessionTTL, now: now,
		logins: map[[32]byte]*login{}, live: map[[32]byte]*session{}}
}

// mint makes a login token for person, valid once within loginTTL.
func (s *sessions) mint(person string) (string, time.Time) {
	tok := newToken()
	now := s.now()
	l := &login{person: person, minted: now, expires: now.Add(s.loginTTL)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(now)
	if len(s.logins) >= maxLogins {
		dropOldest(s.logins, func(l *login) time.Time { return l.minted })
	}
	s.logins[hashToken(tok)] = l
	return tok, l.expires
}

// redeem spends a login token and starts a session: it returns the
// session's cookie value. A token works once, and not after it expired.
func (s *sessions) redeem(tok string) (string, *session, bool) {
	if tok == "" || len(tok) > 128 {
		return "", nil, false
	}
	now := s.now()
	h := hashToken(tok)
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.logins[h]
	delete(s.logins, h)
	if !ok || !now.Before(l.expires) {
		return "", nil, false
	}
	s.sweepLocked(now)
	if len(s.live) >= maxSessions {
		dropOldest(s.live, func(v *session) time.Time { return v.started })
	}
	cookie := newToken()
	sess := &session{label: "ui-" + newToken()[:8], person: l.person, csrf: newToken(),
		started: now, expires: now.Add(s.sessionTTL)}
	s.live[hashToken(cookie)] = sess
	return cookie, sess, true
}

// get returns the live session of a cookie value. The session is shared:
// read and change it only through the sessions' methods.
func (s *sessions) get(cookie string) (session, bool) {
	if cookie == "" || len(cookie) > 128 {
		return session{}, false
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.live[hashToken(cookie)]
	if !ok || !now.Before(sess.expires) {
		return session{}, false
	}
	return *sess, true
}

// takeFlash returns and clears the session's message.
func (s *sessions) takeFlash(cookie string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.live[hashToken(cookie)]
	if !ok {
		return "", false
	}
	msg, isErr := sess.flash, sess.flashError
	sess.flash, sess.flashError = "", false
	return msg, isErr
}

// setFlash leaves a message for the session's next page.
func (s *sessions) setFlash(cookie, msg string, isErr bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess, ok := s.live[hashToken(cookie)]; ok {
		sess.flash, sess.flashError = msg, isErr
	}
}

// end logs a session out.
func (s *sessions) end(cookie string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, hashToken(cookie))
}

// sweepLocked drops expired tokens and sessions.
func (s *sessions) sweepLocked(now time.Time) {
	for h, l := range s.logins {
		if !now.Before(l.expires) {
			delete(s.logins, h)
		}
	}
	for h, sess := range s.live {
		if !now.Before(sess.expires) {
			delete(s.live, h)
		}
	}
}

// sameToken compares a presented token with the expected one in constant
// time (for equal lengths; the length itself is no secret).
func sameToken(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// dropOldest deletes the entry of m that began first (by began): a full
// table makes room by forgetting its oldest login or session.
func dropOldest[V any](m map[[32]byte]V, began func(V) time.Time) {
	var oldest [32]byte
	var at time.Time
	for h, v := range m {
		if t := began(v); at.IsZero() || t.Before(at) {
			oldest, at = h, t
		}
	}
	delete(m, oldest)
}
