package main

import (
	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/auth"
)

// provideAuthenticator: owners act through an API key (Bearer) or the admin
// session cookie with its CSRF token (internal/adapters/httpapi/auth).
func provideAuthenticator(g *auth.Gate) httpapi.Authenticator {
	return g
}
