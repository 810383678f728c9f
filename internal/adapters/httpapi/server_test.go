package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

type thingIn struct {
	ID    uuid.UUID `json:"id" path:"id"`
	Name  string    `json:"name"`
	Limit int       `json:"limit" query:"limit"`
	Flag  *bool     `json:"flag,omitempty" query:"flag"`
}

type thingOut struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Limit int       `json:"limit"`
	Flag  *bool     `json:"flag"`
	Owner uuid.UUID `json:"owner"`
}

func testServer(t *testing.T) (*Server, uuid.UUID) {
	t.Helper()
	owner := uuid.New()
	auth := AuthenticatorFunc(func(r *http.Request) (op.Caller, error) {
		if r.Header.Get("Authorization") != "Bearer good" {
			return op.Caller{}, domain.Unauthorized("UNAUTHORIZED", "no or bad credentials")
		}
		return op.Caller{OwnerID: owner}, nil
	})
	ops := op.Set{
		op.New(op.Meta{Name: "things.put"},
			func(_ context.Context, c op.Caller, in thingIn) (thingOut, error) {
				if in.Name == "taken" {
					return thingOut{}, domain.Conflict("NAME_TAKEN", "that name is taken")
				}
				if in.Name == "boom" {
					return thingOut{}, context.DeadlineExceeded
				}
				return thingOut{ID: in.ID, Name: in.Name, Limit: in.Limit, Flag: in.Flag, Owner: c.OwnerID}, nil
			}),
		op.New(op.Meta{Name: "things.delete"},
			func(context.Context, op.Caller, thingIn) (op.Empty, error) { return op.Empty{}, nil }),
		op.New(op.Meta{Name: "things.public", Public: true},
			func(_ context.Context, c op.Caller, _ op.Empty) (thingOut, error) {
				return thingOut{Owner: c.OwnerID}, nil
			}),
	}
	panicky := MounterFunc(func(e *echo.Echo) {
		e.GET("/panic", func(echo.Context) error { panic("kaboom") })
	})
	eps, err := Bind(ops, []Route{
		{"POST", "/api/admin/things/{id}", "things.put", http.StatusCreated},
		{"DELETE", "/api/admin/things/{id}", "things.delete", 0},
		{"GET", "/api/things", "things.public", 0},
	})
	require.NoError(t, err)
	return New(Deps{Endpoints: eps, Auth: auth, Mounters: []Mounter{panicky}}), owner
}

func call(t *testing.T, s *Server, method, path, auth, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	var out map[string]any
	if rec.Body.Len() > 0 {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	}
	return rec.Code, out
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestMountOpsBindsAndMapsErrors(t *testing.T) {
	t.Parallel()
	s, owner := testServer(t)
	id := uuid.New()
	cases := []struct {
		name, method, path, auth, body string
		status                         int
		code                           string
	}{
		{"no credentials", "POST", "/api/admin/things/" + id.String(), "", `{"name":"a"}`, 401, "UNAUTHORIZED"},
		{"bad credentials", "POST", "/api/admin/things/" + id.String(), "Bearer bad", `{"name":"a"}`, 401, "UNAUTHORIZED"},
		{"malformed id names nothing", "POST", "/api/admin/things/not-a-uuid", "Bearer good", `{"name":"a"}`, 404, "NOT_FOUND"},
		{"unknown field refused", "POST", "/api/admin/things/" + id.String(), "Bearer good", `{"nmae":"a"}`, 400, "INVALID_JSON"},
		{"wrong type", "POST", "/api/admin/things/" + id.String(), "Bearer good", `{"name":7}`, 400, "INVALID_JSON"},
		{"malformed json", "POST", "/api/admin/things/" + id.String(), "Bearer good", `{"name":`, 400, "INVALID_JSON"},
		{"bad query", "POST", "/api/admin/things/" + id.String() + "?limit=x", "Bearer good", `{"name":"a"}`, 400, "INVALID_QUERY"},
		{"domain conflict", "POST", "/api/admin/things/" + id.String(), "Bearer good", `{"name":"taken"}`, 409, "NAME_TAKEN"},
		{"internal error hidden", "POST", "/api/admin/things/" + id.String(), "Bearer good", `{"name":"boom"}`, 500, "INTERNAL"},
		{"unknown route", "GET", "/api/admin/nothing", "Bearer good", "", 404, "NOT_FOUND"},
		{"wrong method", "PUT", "/api/admin/things/" + id.String(), "Bearer good", "", 405, "METHOD_NOT_ALLOWED"},
		{"panic recovered", "GET", "/panic", "", "", 500, "INTERNAL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			status, body := call(t, s, c.method, c.path, c.auth, c.body)
			require.Equal(t, c.status, status, "%v", body)
			require.Equal(t, c.code, errCode(body), "%v", body)
			if c.status == 500 {
				msg := body["error"].(map[string]any)["message"].(string)
				require.NotContains(t, msg, "deadline", "internal errors must not leak")
				require.NotContains(t, msg, "kaboom")
			}
		})
	}

	status, body := call(t, s, "POST", "/api/admin/things/"+id.String()+"?limit=7&flag=true", "Bearer good", `{"name":"a","limit":3}`)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	require.Equal(t, id.String(), body["id"])
	require.Equal(t, "a", body["name"])
	require.EqualValues(t, 7, body["limit"], "query wins over body")
	require.Equal(t, true, body["flag"])
	require.Equal(t, owner.String(), body["owner"])

	status, body = call(t, s, "DELETE", "/api/admin/things/"+id.String(), "Bearer good", "")
	require.Equal(t, http.StatusNoContent, status)
	require.Nil(t, body)

	status, body = call(t, s, "GET", "/api/things", "", "")
	require.Equal(t, http.StatusOK, status, "public ops need no credentials")
	require.Equal(t, uuid.Nil.String(), body["owner"])
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	s, _ := testServer(t)
	big := `{"name":"` + strings.Repeat("x", DefaultBodyLimit+10) + `"}`
	status, body := call(t, s, "POST", "/api/admin/things/"+uuid.NewString(), "Bearer good", big)
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	require.Equal(t, "PAYLOAD_TOO_LARGE", errCode(body))
}

func TestEchoPath(t *testing.T) {
	t.Parallel()
	require.Equal(t, "/api/admin/webhooks/:id/rotate-secret", EchoPath("/api/admin/webhooks/{id}/rotate-secret"))
	require.Equal(t, "/healthz", EchoPath("/healthz"))
}

// TestPanicIsLoggedOnce: a handler's panic is answered as a 500 and logged
// once, by the error handler, with its stack.
func TestPanicIsLoggedOnce(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.WarnLevel)
	panicky := MounterFunc(func(e *echo.Echo) {
		e.GET("/panic", func(echo.Context) error { panic("kaboom") })
	})
	s := New(Deps{Mounters: []Mounter{panicky}, Logger: zap.New(core)})
	status, body := call(t, s, http.MethodGet, "/panic", "", "")
	require.Equal(t, http.StatusInternalServerError, status)
	require.Equal(t, "INTERNAL", errCode(body))
	entries := logs.All()
	var messages []string
	for _, e := range entries {
		messages = append(messages, e.Message)
	}
	require.Len(t, entries, 1, "%q", messages)
	require.Equal(t, "panic in handler", entries[0].Message)
	fields := entries[0].ContextMap()
	require.Contains(t, fields["error"], "kaboom")
	require.Contains(t, fields["stack"], "server_test.go")
}
