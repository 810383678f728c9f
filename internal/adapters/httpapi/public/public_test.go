package public

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
)

type testBundle struct {
	e     *echo.Echo
	owner uuid.UUID
	keys  []string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{e: echo.New(), owner: uuid.New()}
	New(Deps{
		ResolveOwner: func(_ context.Context, requested string) (uuid.UUID, error) {
			switch requested {
			case "":
				return b.owner, nil
			case "many":
				return uuid.Nil, domain.Validation("OWNER_REQUIRED", "several owners")
			default:
				return uuid.Nil, domain.NotFound("UNKNOWN_OWNER", "no such owner")
			}
		},
		Search: func(_ context.Context, owner uuid.UUID, q string, limit int) ([]corpus.SearchHit, error) {
			require.Equal(t, b.owner, owner)
			require.Equal(t, 7, limit)
			return []corpus.SearchHit{{NoteID: uuid.New(), URI: "wiki://" + q, Genre: corpus.GenreWiki, Title: "T", Published: true}}, nil
		},
		Redeem: func(_ context.Context, value string) (access.Redeemed, error) {
			if value != "smac_good" {
				return access.Redeemed{}, domain.Unauthorized("INVALID_CODE", "the code is not valid")
			}
			return access.Redeemed{RoleName: "friends", PublishedOnly: true}, nil
		},
		RequestAccess: func(_ context.Context, owner uuid.UUID, in access.RequestInput, key string) (access.AccessRequest, error) {
			b.keys = append(b.keys, key)
			return access.AccessRequest{ID: uuid.New(), OwnerID: owner, Status: access.RequestPending}, nil
		},
		ClientIP: func(*http.Request) string { return "198.51.100.4" },
	}).Mount(b.e)
	return b
}

func (b *testBundle) do(method, path, body string) (int, string) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	b.e.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func TestPublicRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	status, body := b.do(http.MethodGet, "/api/search?q=okapi&limit=7", "")
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"data":[{"uri":"wiki://okapi","genre":"wiki","title":"T","excerpt":"","rank":0}]}`, body, "no note id, no published flag")

	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{http.MethodGet, "/api/search?q=x&owner=many", "", http.StatusBadRequest, "OWNER_REQUIRED"},
		{http.MethodGet, "/api/search?q=x&owner=nobody", "", http.StatusNotFound, "UNKNOWN_OWNER"},
		{http.MethodGet, "/api/search?q=x&limit=lots", "", http.StatusBadRequest, "INVALID_QUERY"},
		{http.MethodPost, RedeemPath, `{"code":"smac_bad"}`, http.StatusUnauthorized, "INVALID_CODE"},
		{http.MethodPost, RedeemPath, `{"code":"smac_good","extra":1}`, http.StatusBadRequest, "INVALID_JSON"},
		{http.MethodPost, RedeemPath, `{"code":"` + strings.Repeat("x", maxBody) + `"}`, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE"},
		{http.MethodPost, AccessRequestsPath + "?owner=nobody", `{"name":"n","email":"n@example.com"}`, http.StatusNotFound, "UNKNOWN_OWNER"},
	}
	for _, c := range cases {
		status, body := b.do(c.method, c.path, c.body)
		require.Equal(t, c.status, status, "%s %s: %s", c.method, c.path, body)
		require.Contains(t, body, `"code":"`+c.code+`"`)
	}

	status, body = b.do(http.MethodPost, RedeemPath, `{"code":"smac_good"}`)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"role":"friends","published_only":true,"expires_at":null}`, body)

	status, body = b.do(http.MethodPost, AccessRequestsPath, `{"name":"n","email":"n@example.com"}`)
	require.Equal(t, http.StatusCreated, status, body)
	require.Contains(t, body, `"status":"pending"`)
	require.Equal(t, []string{access.ClientKey(b.owner, "198.51.100.4")}, b.keys, "rate-limited by the gate's client address, hashed")
}
