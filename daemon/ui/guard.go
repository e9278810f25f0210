package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// The guard every request passes, in this order:
//
//  1. security headers: a CSP allowing only this response's nonce for
//     script and style, no framing, a referrer only to this origin (with
//     none, Chrome sends "Origin: null" on the page's own form posts), no
//     caching;
//  2. the Host must be the page's own address (a DNS-rebinding page on
//     another name gets nothing);
//  3. any Authorization header is refused: worker tokens, or anything
//     else, never work here;
//  4. GET /login is the only page without a session; everything else
//     without a live session cookie gets 401 and the "log in with
//     `toolcage ui open`" page;
//  5. a POST must come from this origin (Origin, and Sec-Fetch-Site when
//     the browser sends it) and carry the session's CSRF token.

// cookieName is the session cookie.
const cookieName = "toolcage_session"

// csrfField is the form field carrying the CSRF token.
const csrfField = "csrf"

// maxForm bounds a POST body.
const maxForm = 64 << 10

func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nonce := newToken()
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+nonce+"'; style-src 'nonce-"+nonce+
			"'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		ctx := context.WithValue(r.Context(), nonceKey, nonce)
		r = r.WithContext(ctx)

		if !s.hostOK(r.Host) {
			s.log.Warn("review page: request for another host refused", "host", r.Host, "remote", r.RemoteAddr)
			s.message(w, r, http.StatusMisdirectedRequest, "Wrong address", "This page is served as http://"+s.cfg.Addr+" only.")
			return
		}
		if r.Header.Get("Authorization") != "" {
			s.log.Warn("review page: request with an Authorization header refused", "remote", r.RemoteAddr)
			s.message(w, r, http.StatusUnauthorized, "Not for tokens",
				"The review page is for the person running the daemon: no token works here. Log in with the link `toolcage ui open` prints.")
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/login" {
			next.ServeHTTP(w, r)
			return
		}
		c, err := r.Cookie(cookieName)
		var sess session
		ok := err == nil
		if ok {
			sess, ok = s.sess.get(c.Value)
		}
		if !ok {
			s.loginPage(w, r, http.StatusUnauthorized, "")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if why := s.crossSite(r); why != "" {
				s.log.Warn("review page: cross-site request refused", "why", why, "session", sess.label, "path", r.URL.Path)
				s.message(w, r, http.StatusForbidden, "Refused", "This action did not come from the review page ("+why+").")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
			if err := r.ParseForm(); err != nil {
				status := http.StatusBadRequest
				if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
					status = http.StatusRequestEntityTooLarge
				}
				s.message(w, r, status, "Refused", fmt.Sprintf("The form could not be read (at most %d bytes): %v", maxForm, err))
				return
			}
			if !sameToken(r.PostForm.Get(csrfField), sess.csrf) {
				s.log.Warn("review page: action without a valid CSRF token refused", "session", sess.label, "path", r.URL.Path)
				s.message(w, r, http.StatusForbidden, "Refused", "This action did not carry the page's CSRF token. Reload the page and try again.")
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, sessionKey, reqSession{session: sess, cookie: c.Value})))
	})
}

// crossSite says why a state-changing request is not from this page's
// origin, or "" when it is.
func (s *Server) crossSite(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return "Sec-Fetch-Site: " + site
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		// Browsers send Origin with every POST; a client that does not
		// still needs the CSRF token, which only a page read with the
		// session holds.
		return ""
	}
	if origin != "http://"+r.Host {
		return "Origin " + origin
	}
	return ""
}

// login trades a login token for a session cookie and goes to the page.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	cookie, sess, ok := s.sess.redeem(r.URL.Query().Get("token"))
	if !ok {
		s.log.Warn("review page: login with an unknown, used or expired token refused", "remote", r.RemoteAddr)
		s.loginPage(w, r, http.StatusUnauthorized, "That login link is not valid: it was used already, has expired, or was never issued.")
		return
	}
	s.log.Info("review page: logged in", "session", sess.label, "person", sess.person)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: cookie, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Expires: sess.expires, MaxAge: int(sess.expires.Sub(s.cfg.Now()).Seconds())})
	http.Redirect(w, r, "/approvals", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	rs, _ := sessionOf(r.Context())
	s.sess.end(rs.cookie)
	s.log.Info("review page: logged out", "session", rs.label)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	s.loginPage(w, r, http.StatusOK, "You are logged out.")
}
