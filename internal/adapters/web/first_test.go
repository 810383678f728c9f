package web_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/web"
)

func TestRootLeadsToTheAdminAndUnknownAdminPathsAreHTML(t *testing.T) {
	t.Parallel()
	b := setup(t, allOps)
	root := b.get(t, "/")
	require.Equal(t, http.StatusSeeOther, root.status)
	require.Equal(t, "/admin", root.location)

	for _, path := range []string{"/admin/nope", "/admin/webhooks/x/y/z", "/admin/notes/1/2/3"} {
		anon := b.get(t, path)
		require.Equal(t, http.StatusNotFound, anon.status, path)
		require.Contains(t, anon.body, "<!doctype html>", path)
		require.Contains(t, anon.body, "There is no admin page at "+path)
		require.NotContains(t, anon.body, "Sign out", "no session, no navigation")
	}
	b.login(t)
	signed := b.get(t, "/admin/nope")
	require.Equal(t, http.StatusNotFound, signed.status)
	require.Contains(t, signed.body, `href="/admin/webhooks"`, "a signed-in owner gets the navigation")
}

func TestBackLinkGoesIntoHTMLPagesOnly(t *testing.T) {
	t.Parallel()
	inner := http.NewServeMux()
	inner.HandleFunc("/full", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, err := io.WriteString(w, "<html><body><div id=root></div></body></html>")
		require.NoError(t, err)
	})
	inner.HandleFunc("/api", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, err := io.WriteString(w, `{"body":"</body>"}`)
		require.NoError(t, err)
	})
	srv := httptest.NewServer(web.BackLink(inner))
	t.Cleanup(srv.Close)
	get := func(path string) (string, http.Header) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b), resp.Header
	}
	page, hdr := get("/full")
	require.Contains(t, page, `<a id="standmeet-admin-link" href="/admin"`)
	require.True(t, strings.HasSuffix(page, "</body></html>"))
	require.Equal(t, hdr.Get("Content-Length"), strconv.Itoa(len(page)))
	api, _ := get("/api")
	require.Equal(t, `{"body":"</body>"}`, api)
}

func TestStartOnFirstRequestStartsOnceBeforeServing(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		starts   int
		failures []error
	)
	fail := errors.New("not yet")
	start := func() error {
		mu.Lock()
		defer mu.Unlock()
		starts++
		if starts == 1 {
			return fail
		}
		return nil
	}
	served := make(chan int, 64)
	inner := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		served <- starts
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	h := web.StartOnFirstRequest(inner, start, func(err error) { failures = append(failures, err) })
	require.Zero(t, starts, "nothing starts before a request")

	get := func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/admin/tasks", nil))
		require.Equal(t, http.StatusNoContent, rec.Code)
	}
	get()
	require.Equal(t, 1, <-served, "a failed start still serves the request")
	require.Equal(t, []error{fail}, failures)

	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get()
		}()
	}
	wg.Wait()
	close(served)
	for n := range served {
		require.Equal(t, 2, n, "every request after a failure waits for the next start, which runs once")
	}
	require.Equal(t, 2, starts)
	require.Len(t, failures, 1)
}
