// Package auth is the HTTP side of the owner domain: the httpapi
// Authenticator for /api/admin/*, /mcp and the admin UI (an API key as
// `Authorization: Bearer smk_…`, or the admin session cookie with a
// double-submit CSRF token on unsafe methods), the login, logout and
// recovery routes, the IP-ban middleware, and the adapters the domain's
// ports need at runtime (argon2id password hashing, random tokens, the
// development recovery mailer).
//
// The admin UI reuses Gate's exported helpers (Login, SetSessionCookies,
// SessionFromRequest, CSRFToken, ClientIP) for its HTML forms.
package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
)

// Cookie, header and form field names of the session and its CSRF token.
const (
	SessionCookie = "standmeet_session"
	CSRFCookie    = "standmeet_csrf"
	CSRFHeader    = "X-CSRF-Token"
	CSRFField     = "csrf_token"
)

// Error codes of this adapter (the domain's are in package owner).
const (
	CodeUnauthorized = "UNAUTHORIZED"
	CodeCSRF         = "CSRF_TOKEN_INVALID"
)

// Options tune a Gate.
type Options struct {
	// TrustedProxies are the addresses of reverse proxies whose
	// X-Forwarded-For and X-Forwarded-Proto are believed. Empty (the
	// default) means the client is the TCP peer, whatever headers say.
	TrustedProxies []netip.Prefix
}

// Gate authenticates requests for the owner domain and serves its public
// auth routes. It is safe for concurrent use.
type Gate struct {
	svc    *owner.Service
	opts   Options
	logger *zap.Logger
}

// New returns a Gate over the owner service.
func New(svc *owner.Service, opts Options, logger *zap.Logger) *Gate {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Gate{svc: svc, opts: opts, logger: logger}
}

var _ httpapi.Authenticator = (*Gate)(nil)

// Authenticate tells which owner r acts for. A request with an
// Authorization header must carry a valid `Bearer smk_…` key and needs no
// CSRF token (a browser never adds that header by itself). Otherwise the
// session cookie must name a live session, and an unsafe method must carry
// the session's CSRF token in the X-CSRF-Token header or the csrf_token
// form field, equal to the standmeet_csrf cookie. No credentials or bad
// ones are Unauthorized (401); a missing or wrong CSRF token is Forbidden
// (403).
func (g *Gate) Authenticate(r *http.Request) (op.Caller, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, cred, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return op.Caller{}, domain.Unauthorized(CodeUnauthorized, "use Authorization: Bearer <api key>")
		}
		k, err := g.svc.AuthenticateAPIKey(r.Context(), strings.TrimSpace(cred))
		if err != nil {
			return op.Caller{}, err
		}
		// The key's scopes go with the caller, so every op call refuses what
		// they do not grant (op.Authorize); nil keeps a full key full.
		return op.Caller{OwnerID: k.OwnerID, APIKeyID: k.ID, Scopes: k.Scopes}, nil
	}
	sess, token, err := g.sessionFromRequest(r)
	if err != nil {
		return op.Caller{}, err
	}
	if !safeMethod(r.Method) {
		if err := checkCSRF(r, token); err != nil {
			return op.Caller{}, err
		}
	}
	return op.Caller{OwnerID: sess.OwnerID, SessionID: sess.ID}, nil
}

// AuthenticateSameOrigin is Authenticate without the CSRF token check, for
// a surface whose frontend cannot send the token (River's UI) and which
// refuses cross-origin requests by Fetch Metadata and Origin
// (http.CrossOriginProtection) before calling it. Never use it where
// cross-origin requests are let through.
func (g *Gate) AuthenticateSameOrigin(r *http.Request) (op.Caller, error) {
	if r.Header.Get("Authorization") != "" {
		return g.Authenticate(r)
	}
	sess, _, err := g.sessionFromRequest(r)
	if err != nil {
		return op.Caller{}, err
	}
	return op.Caller{OwnerID: sess.OwnerID, SessionID: sess.ID}, nil
}

// SessionFromRequest returns the live session the request's cookie names,
// or an Unauthorized error. It checks no CSRF token: use it for safe
// methods, or call CheckCSRF as well.
func (g *Gate) SessionFromRequest(r *http.Request) (owner.Session, error) {
	s, _, err := g.sessionFromRequest(r)
	return s, err
}

func (g *Gate) sessionFromRequest(r *http.Request) (owner.Session, string, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return owner.Session{}, "", domain.Unauthorized(CodeUnauthorized, "no credentials: log in or send Authorization: Bearer <api key>")
	}
	s, err := g.svc.AuthenticateSession(r.Context(), c.Value)
	if err != nil {
		return owner.Session{}, "", err
	}
	return s, c.Value, nil
}

// CheckCSRF checks the request's CSRF token against its session cookie (the
// check Authenticate applies to unsafe methods).
func (g *Gate) CheckCSRF(r *http.Request) error {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return domain.Forbidden(CodeCSRF, "no session to check the CSRF token against")
	}
	return checkCSRF(r, c.Value)
}

// CSRFToken returns the CSRF token of the request's session cookie, for a
// form's hidden csrf_token field; "" when there is no session cookie. It
// does not check that the session is live.
func CSRFToken(r *http.Request) string {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return ""
	}
	return CSRFTokenFor(c.Value)
}

// CSRFTokenFor derives a session's CSRF token from its session token: an
// HMAC keyed by the session token, so it needs no storage, cannot be
// chosen by an attacker (a planted csrf cookie does not match), and does
// not reveal the session token.
func CSRFTokenFor(sessionToken string) string {
	m := hmac.New(sha256.New, []byte(sessionToken))
	m.Write([]byte("standmeet csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF is the double-submit check: the header (or form field), the
// csrf cookie and the session's derived token must all be equal, compared
// in constant time.
func checkCSRF(r *http.Request, sessionToken string) error {
	bad := domain.Forbidden(CodeCSRF, "missing or wrong CSRF token: send the "+CSRFHeader+" header with the csrf_token from login")
	sent := r.Header.Get(CSRFHeader)
	if sent == "" && isForm(r) {
		sent = r.PostFormValue(CSRFField)
	}
	c, err := r.Cookie(CSRFCookie)
	if sent == "" || err != nil {
		return bad
	}
	want := CSRFTokenFor(sessionToken)
	okCookie := subtle.ConstantTimeCompare([]byte(c.Value), []byte(want))
	okSent := subtle.ConstantTimeCompare([]byte(sent), []byte(want))
	if okCookie&okSent != 1 {
		return bad
	}
	return nil
}

func isForm(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/x-www-form-urlencoded") || strings.HasPrefix(ct, "multipart/form-data")
}

func safeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// ClientIP returns the address the request came from: the TCP peer, or,
// when the peer is a trusted proxy, the right-most X-Forwarded-For entry
// that is not a trusted proxy. Forwarded headers from anyone else are
// ignored, so a client cannot pick the address it is limited or banned by.
func (g *Gate) ClientIP(r *http.Request) string {
	peer := parseAddr(r.RemoteAddr)
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	if !g.trusted(peer) {
		return peer.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a := parseAddr(strings.TrimSpace(hops[i]))
		if !a.IsValid() {
			break
		}
		if !g.trusted(a) {
			return a.String()
		}
	}
	return peer.String()
}

// secure reports whether the client reached us over TLS (directly, or to a
// trusted proxy that says so).
func (g *Gate) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	peer := parseAddr(r.RemoteAddr)
	return peer.IsValid() && g.trusted(peer) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func (g *Gate) trusted(a netip.Addr) bool {
	for _, p := range g.opts.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseAddr parses "host:port" or a bare address, IPv4-mapped IPv6
// unmapped, zone dropped.
func parseAddr(s string) netip.Addr {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}
