package station

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
)

// The door of every write against a browser tricked into making it: a page of another
// origin can submit a form or send a no-cors fetch to the station (the station's page is
// on the line's network, in the operator's browser), so a write that a browser marks
// cross-site is refused, a report or live event declared as a form or text/plain (what a
// cross-site page can send without asking) is refused, and the page's
// acknowledge form carries a token bound to the browser's session.

// sessionCookie holds a browser's session id, the key of the page's form token.
const sessionCookie = "linerate_session"

// crossSite says why req is a write a browser made for another site ("": it is not):
// Sec-Fetch-Site other than same-origin or none (typed by the user), or an Origin that
// is not the station's own.
func crossSite(req *http.Request) string {
	switch site := req.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return "Sec-Fetch-Site " + site
	}
	if o := req.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if o == "null" || err != nil || u.Host != req.Host {
			return "Origin " + o + " is not this station (" + req.Host + ")"
		}
	}
	return ""
}

// fromBrowser says a browser sent req: browsers name the origin or the fetch site of a
// POST, or send the station's cookie; boards and scripts do none of these.
func fromBrowser(req *http.Request) bool {
	if req.Header.Get("Origin") != "" || req.Header.Get("Sec-Fetch-Site") != "" {
		return true
	}
	_, err := req.Cookie(sessionCookie)
	return err == nil
}

// formBody says the body is declared as what a page of another origin may send without
// the browser asking the station first (a CORS "simple" request: text/plain, a form,
// multipart): never a report or a live event, which are JSON. A body without a type is
// let through (scripts send it so; a browser sending one is cross-site by its Origin).
func formBody(req *http.Request) bool {
	ct := req.Header.Get("Content-Type")
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err != nil || mt == "text/plain" || mt == "application/x-www-form-urlencoded" || mt == "multipart/form-data"
}

// guard is the door of a write before its token: cross-site writes (403) and, for
// reports and live events, bodies declared as text or a form (415) are refused, counted
// and logged. false: answered.
func (s *Server) guard(w http.ResponseWriter, req *http.Request, jsonBody bool) bool {
	if why := crossSite(req); why != "" {
		s.refuseWrite(req, "cross-site", why)
		http.Error(w, "a cross-site write: "+why+"; use the station's own page, or a client that is not a browser", http.StatusForbidden)
		return false
	}
	if jsonBody && formBody(req) {
		why := fmt.Sprintf("Content-Type %q", req.Header.Get("Content-Type"))
		s.refuseWrite(req, "not-json", why)
		http.Error(w, why+": send the body as application/json", http.StatusUnsupportedMediaType)
		return false
	}
	return true
}

func (s *Server) refuseWrite(req *http.Request, reason, why string) {
	if req.URL.Path == "/api/reports" {
		s.refused.report(reason, req.RemoteAddr, "", "", errors.New(why))
		return
	}
	s.refused.logf("%s %s refused from %s (%s): %s", req.Method, req.URL.Path, req.RemoteAddr, reason, why)
}

// session is the browser's session id, set on the page when it has none.
func (s *Server) session(w http.ResponseWriter, req *http.Request) string {
	if c, err := req.Cookie(sessionCookie); err == nil && len(c.Value) == 32 {
		return c.Value
	}
	b := make([]byte, 16)
	rand.Read(b)
	id := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return id
}

// formToken is the page's form token for a session: an HMAC under a key drawn when the
// station started, so no other page can make one.
func (s *Server) formToken(session string) string {
	m := hmac.New(sha256.New, s.formKey[:])
	m.Write([]byte(session))
	return hex.EncodeToString(m.Sum(nil))
}

// formTokenOK says a browser's write carries its session's form token.
func (s *Server) formTokenOK(req *http.Request) bool {
	c, err := req.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return false
	}
	return hmac.Equal([]byte(req.FormValue("csrf")), []byte(s.formToken(c.Value)))
}
