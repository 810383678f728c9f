package main

import (
	"net/http"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// provideAuthenticator refuses every request until the owner domain's
// authenticator is wired in its place.
func provideAuthenticator() httpapi.Authenticator {
	return httpapi.AuthenticatorFunc(func(*http.Request) (op.Caller, error) {
		return op.Caller{}, domain.Unauthorized("UNAUTHORIZED", "no credentials")
	})
}
