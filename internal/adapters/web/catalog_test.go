package web_test

import (
	"html"
	"html/template"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// withCatalog adds the real webhooks.event_types op to the fake world's.
func withCatalog(w *world) op.Set {
	svc := &webhook.Service{}
	for _, d := range svc.Ops() {
		if d.Meta().Name == "webhooks.event_types" {
			return append(w.ops(), d)
		}
	}
	panic("webhooks.event_types is not declared")
}

func TestEventCatalogPageShowsEveryTypeWithProducerSchemaAndExample(t *testing.T) {
	t.Parallel()
	b := setup(t, withCatalog)
	b.login(t)
	page := b.get(t, "/admin/event-types")
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Contains(t, page.body, `href="/admin/event-types" aria-current="page"`)
	body := html.UnescapeString(page.body)
	for _, et := range domain.WebhookEventTypes() {
		require.Contains(t, body, `<tr data-type="`+et.Name+`">`)
		require.Contains(t, body, et.Description)
		require.Contains(t, body, `data-schema="`+et.Name+`"`)
		require.Contains(t, body, `"type": "`+et.Name+`"`, "the example body of %s", et.Name)
		if et.Publishable() {
			require.Contains(t, body, "your services publish it")
		} else {
			require.Contains(t, body, "(in the code: <code>"+template.HTMLEscapeString(et.Producer.Name)+"</code>)", "the code name is a note")
		}
	}
	require.Contains(t, body, `"additionalProperties": false`, "schemas are shown indented")
	require.Contains(t, body, "18 come from your own services")

	// Without the op the section is not offered.
	plain := setup(t, allOps)
	plain.login(t)
	require.NotContains(t, plain.get(t, "/admin/webhooks").body, `href="/admin/event-types"`)
	require.Equal(t, http.StatusNotFound, plain.get(t, "/admin/event-types").status)
	require.True(t, strings.Contains(b.get(t, "/admin/webhooks").body, `href="/admin/event-types"`))
}
