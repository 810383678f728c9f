// Package vaultimport serves POST /api/admin/vault/import, the REST
// projection of the vault.import op, which takes two encodings of the same
// input: a JSON body (the op's input, as MountOps would bind it) or a zip
// of markdown files with front matter (parsed by corpus/vault). The route
// needs its own handler because a zip is a raw body, and its own body limit
// (the server skips the default 2 MiB one for this path). Mounters are
// mounted after the ops, so this handler replaces the generic one for the
// op's route; the e2e test posts both encodings to prove it.
package vaultimport

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/corpus/vault"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Path is the route of vault.import (its line in httpapi.Routes).
const Path = "/api/admin/vault/import"

// Body limits of the route.
const (
	// MaxZipBytes caps a zipped vault as sent.
	MaxZipBytes = 32 << 20
	// MaxJSONBytes caps a JSON import.
	MaxJSONBytes = 16 << 20
)

// ImportFunc runs the import use case.
type ImportFunc func(ctx context.Context, ownerID uuid.UUID, in corpus.ImportInput) (corpus.ImportResult, error)

// Mounter serves the vault import route.
type Mounter struct {
	auth   httpapi.Authenticator
	imp    ImportFunc
	logger *zap.Logger
	limits vault.Limits
}

var _ httpapi.Mounter = (*Mounter)(nil)

// New returns the route's mounter.
func New(auth httpapi.Authenticator, imp ImportFunc, logger *zap.Logger) *Mounter {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Mounter{auth: auth, imp: imp, logger: logger}
}

// Mount implements httpapi.Mounter.
func (m *Mounter) Mount(e *echo.Echo) {
	e.POST(Path, m.handle)
}

func (m *Mounter) fail(c echo.Context, err error) error { return httpapi.WriteError(c, m.logger, err) }

func (m *Mounter) handle(c echo.Context) error {
	req := c.Request()
	caller, err := m.auth.Authenticate(req)
	if err != nil {
		return m.fail(c, err)
	}
	// This handler serves the op without its Call, so it refuses a key
	// whose scopes do not grant the op itself, before reading the body.
	if err := op.Authorize(corpus.VaultImportMeta, caller); err != nil {
		return m.fail(c, err)
	}
	mediaType, _, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	var in corpus.ImportInput
	switch mediaType {
	case "application/zip", "application/x-zip-compressed":
		in, err = m.fromZip(c)
	case "application/json", "":
		in, err = m.fromJSON(c)
	default:
		// No domain kind maps to 415, so the contract's shape is written here.
		return c.JSON(http.StatusUnsupportedMediaType, httpapi.ErrorBody{Error: httpapi.ErrorDetail{Code: "UNSUPPORTED_MEDIA_TYPE",
			Message: "send application/json (the op's input) or application/zip (a vault of markdown files)"}})
	}
	if err != nil {
		return m.fail(c, err)
	}
	res, err := m.imp(req.Context(), caller.OwnerID, in)
	if err != nil {
		return m.fail(c, err)
	}
	return c.JSON(http.StatusCreated, corpus.ImportResultViewOf(res))
}

func readCapped(c echo.Context, max int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, max))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, domain.TooLarge("PAYLOAD_TOO_LARGE", "the import is over the size limit")
		}
		return nil, domain.Validation("BAD_REQUEST", "cannot read the request body")
	}
	return body, nil
}

// fromJSON binds the op's input exactly as MountOps does for other ops
// (unknown fields refused), or a bare list of notes.
func (m *Mounter) fromJSON(c echo.Context) (corpus.ImportInput, error) {
	body, err := readCapped(c, MaxJSONBytes)
	if err != nil {
		return corpus.ImportInput{}, err
	}
	var view corpus.ImportInputView
	trimmed := strings.TrimSpace(string(body))
	// A bare list of notes is the short form of {"notes": [...]}.
	target := any(&view)
	if strings.HasPrefix(trimmed, "[") {
		target = &view.Notes
	}
	if err := op.DecodeJSON([]byte(trimmed), target); err != nil {
		return corpus.ImportInput{}, err
	}
	if err := op.Check(&view); err != nil {
		return corpus.ImportInput{}, err
	}
	return corpus.ImportFromView(view)
}

// fromZip reads a zipped vault; ?parent_id= places it under a note and
// ?genre= is the genre of notes whose front matter names none (default
// wiki).
func (m *Mounter) fromZip(c echo.Context) (corpus.ImportInput, error) {
	var in corpus.ImportInput
	if p := c.QueryParam("parent_id"); p != "" {
		id, err := uuid.Parse(p)
		if err != nil {
			return in, domain.Unprocessable("PARENT_NOT_FOUND", "parent_id names no note of yours").WithField("parent_id")
		}
		in.ParentID = &id
	}
	genre := corpus.GenreWiki
	if g := c.QueryParam("genre"); g != "" {
		genre = corpus.Genre(strings.ToLower(g))
	}
	body, err := readCapped(c, MaxZipBytes)
	if err != nil {
		return in, err
	}
	items, err := vault.ParseZip(body, genre, m.limits)
	if err != nil {
		return in, err
	}
	in.Items = items
	return in, nil
}
