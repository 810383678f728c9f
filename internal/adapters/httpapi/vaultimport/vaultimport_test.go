package vaultimport

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

func TestVaultImportRoute(t *testing.T) {
	t.Parallel()
	owner := uuid.New()
	var got []corpus.ImportInput
	e := echo.New()
	auth := httpapi.AuthenticatorFunc(func(r *http.Request) (op.Caller, error) {
		if r.Header.Get("Authorization") != "Bearer k" {
			return op.Caller{}, domain.Unauthorized("UNAUTHORIZED", "no credentials")
		}
		return op.Caller{OwnerID: owner}, nil
	})
	New(auth, func(_ context.Context, o uuid.UUID, in corpus.ImportInput) (corpus.ImportResult, error) {
		require.Equal(t, owner, o)
		got = append(got, in)
		return corpus.ImportResult{Notes: []corpus.Imported{{Ref: "a", Note: corpus.Note{URI: "wiki://a"}}}}, nil
	}, nil).Mount(e)
	post := func(path, key, contentType string, body []byte) (int, string) {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}

	status, body := post(Path, "", "application/json", []byte(`{"notes":[]}`))
	require.Equal(t, http.StatusUnauthorized, status, body)
	status, body = post(Path, "k", "text/csv", []byte("a,b"))
	require.Equal(t, http.StatusUnsupportedMediaType, status, body)
	require.Contains(t, body, "UNSUPPORTED_MEDIA_TYPE")
	status, body = post(Path, "k", "application/json", []byte(`{"notes":[{"genre":"wiki","title":"A","bogus":1}]}`))
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Empty(t, got, "nothing imported on bad input")

	status, body = post(Path, "k", "application/json; charset=utf-8", []byte(`{"notes":[{"ref":"a","genre":"wiki","title":"A"}]}`))
	require.Equal(t, http.StatusCreated, status, body)
	require.JSONEq(t, `{"imported":1,"notes":[{"ref":"a","id":"00000000-0000-0000-0000-000000000000","uri":"wiki://a"}]}`, body)

	status, body = post(Path, "k", "application/json", []byte(` [{"genre":"wiki","title":"Bare"}]`))
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, "Bare", got[1].Items[0].Title, "a bare list is the notes")
	got = got[:1]

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("a.md")
	require.NoError(t, err)
	_, err = w.Write([]byte("---\ntitle: A\n---\nbody"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	parent := uuid.New()
	status, body = post(Path+"?genre=Writing&parent_id="+parent.String(), "k", "application/zip", buf.Bytes())
	require.Equal(t, http.StatusCreated, status, body)
	require.Len(t, got, 2)
	require.Equal(t, &parent, got[1].ParentID)
	require.Equal(t, []corpus.ImportItem{{Ref: "a", Fields: corpus.Fields{Genre: corpus.GenreWriting, Title: "A", Body: "body"}}}, got[1].Items)

	status, body = post(Path+"?parent_id=nope", "k", "application/zip", buf.Bytes())
	require.Equal(t, http.StatusUnprocessableEntity, status, body)
	status, body = post(Path, "k", "application/zip", bytes.Repeat([]byte("x"), MaxZipBytes+1))
	require.Equal(t, http.StatusRequestEntityTooLarge, status, body)
}
