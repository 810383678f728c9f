// Package optest is a small op set for the tests of the surfaces (OpenAPI,
// MCP): shaped like the real ones — ids in the path, optional pointers,
// maps, times, pages, an empty result, a public op — over an in-memory store,
// so the projections can be tested without any domain.
package optest

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Thing is the resource of the op set.
type Thing struct {
	ID        uuid.UUID         `json:"id"`
	Name      string            `json:"name"`
	Tags      []string          `json:"tags"`
	Labels    map[string]string `json:"labels"`
	Enabled   bool              `json:"enabled"`
	EmbedID   *uuid.UUID        `json:"embed_id"`
	CreatedAt time.Time         `json:"created_at"`
}

// CreateIn is the input of things.create.
type CreateIn struct {
	Name    string            `json:"name" doc:"what to call it"`
	Tags    []string          `json:"tags,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Enabled *bool             `json:"enabled,omitempty"`
}

type idIn struct {
	ID uuid.UUID `json:"id" path:"id"`
}

type updateIn struct {
	ID   uuid.UUID `json:"id" path:"id"`
	Name *string   `json:"name,omitempty"`
}

type listIn struct {
	op.PageInput
	Prefix string `json:"prefix,omitempty" query:"prefix" doc:"only names starting with this"`
}

type row struct {
	owner uuid.UUID
	thing Thing
}

type store struct {
	mu   sync.Mutex
	rows map[uuid.UUID]row
}

func (s *store) get(owner, id uuid.UUID) (Thing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[id]
	if !ok || r.owner != owner {
		return Thing{}, domain.NotFound("THING_NOT_FOUND", "no such thing")
	}
	return r.thing, nil
}

func (s *store) put(owner uuid.UUID, t Thing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[t.ID] = row{owner: owner, thing: t}
}

// Routes are the REST routes of Ops.
func Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "GET", Path: "/api/admin/things", Op: "things.list"},
		{Method: "POST", Path: "/api/admin/things", Op: "things.create", Status: http.StatusCreated},
		{Method: "GET", Path: "/api/admin/things/{id}", Op: "things.get"},
		{Method: "PATCH", Path: "/api/admin/things/{id}", Op: "things.update"},
		{Method: "DELETE", Path: "/api/admin/things/{id}", Op: "things.delete"},
		{Method: "POST", Path: "/api/admin/things/fail", Op: "things.fail"},
		{Method: "GET", Path: "/api/status", Op: "status.get"},
	}
}

// Endpoints returns Ops bound to Routes.
func Endpoints() httpapi.Endpoints {
	eps, err := httpapi.Bind(Ops(), Routes())
	if err != nil {
		panic(err)
	}
	return eps
}

// Ops returns a fresh op set over an empty store. A thing belongs to the
// caller that created it; another caller gets THING_NOT_FOUND. things.fail
// always fails with a non-domain error.
func Ops() op.Set {
	s := &store{rows: map[uuid.UUID]row{}}
	return op.Set{
		op.New(op.Meta{Name: "things.list", Summary: "List things"},
			func(_ context.Context, c op.Caller, in listIn) (op.Page[Thing], error) {
				s.mu.Lock()
				var rows []Thing
				for _, r := range s.rows {
					if r.owner == c.OwnerID && strings.HasPrefix(r.thing.Name, in.Prefix) {
						rows = append(rows, r.thing)
					}
				}
				s.mu.Unlock()
				sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
				return op.NewPage(rows, in.NormalizedLimit(), func(t Thing) string { return t.ID.String() }), nil
			}),
		op.New(op.Meta{Name: "things.create", Summary: "Create a thing"},
			func(_ context.Context, c op.Caller, in CreateIn) (Thing, error) {
				if in.Name == "" {
					return Thing{}, domain.Validation("NAME_REQUIRED", "name is required").WithField("name")
				}
				t := Thing{ID: uuid.New(), Name: in.Name, Tags: in.Tags, Labels: in.Labels, Enabled: in.Enabled == nil || *in.Enabled, CreatedAt: time.Now().UTC()}
				s.put(c.OwnerID, t)
				return t, nil
			}),
		op.New(op.Meta{Name: "things.get", Summary: "Get a thing"},
			func(_ context.Context, c op.Caller, in idIn) (Thing, error) { return s.get(c.OwnerID, in.ID) }),
		op.New(op.Meta{Name: "things.update", Summary: "Change a thing"},
			func(_ context.Context, c op.Caller, in updateIn) (Thing, error) {
				t, err := s.get(c.OwnerID, in.ID)
				if err != nil {
					return t, err
				}
				if in.Name != nil {
					t.Name = *in.Name
				}
				s.put(c.OwnerID, t)
				return t, nil
			}),
		op.New(op.Meta{Name: "things.delete", Summary: "Delete a thing"},
			func(_ context.Context, c op.Caller, in idIn) (op.Empty, error) {
				if _, err := s.get(c.OwnerID, in.ID); err != nil {
					return op.Empty{}, err
				}
				s.mu.Lock()
				delete(s.rows, in.ID)
				s.mu.Unlock()
				return op.Empty{}, nil
			}),
		op.New(op.Meta{Name: "things.fail", Summary: "Always fails inside"},
			func(context.Context, op.Caller, op.Empty) (op.Empty, error) {
				return op.Empty{}, errors.New("database on fire at 10.1.2.3")
			}),
		op.New(op.Meta{Name: "status.get", Summary: "Public status", Public: true},
			func(context.Context, op.Caller, op.Empty) (op.List[string], error) {
				return op.List[string]{Data: []string{"ok"}}, nil
			}),
	}
}
