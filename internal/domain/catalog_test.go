package domain

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCatalogDeclaresTheThirtyNineWebhookTypesOfSeed002(t *testing.T) {
	t.Parallel()
	all := EventTypes()
	seen := map[string]bool{}
	for _, et := range all {
		require.False(t, seen[et.Name], "declared twice: %s", et.Name)
		seen[et.Name] = true
		if et.Name == EventOwnerOperatorChanged {
			require.Equal(t, Internal, et.Exposure, et.Name)
		} else {
			require.Equal(t, Webhook, et.Exposure, et.Name)
		}
		require.NotEmpty(t, et.Domain, et.Name)
		require.NotEmpty(t, et.Description, et.Name)
		require.Equal(t, strings.ToLower(et.Name), et.Name)
	}
	require.Len(t, WebhookEventTypes(), 39)
}

func TestExposureDefaultsToInternal(t *testing.T) {
	t.Parallel()
	var et EventType
	require.Equal(t, Internal, et.Exposure)
	require.Equal(t, "internal", et.Exposure.String())
}

func TestLookupAndExpand(t *testing.T) {
	t.Parallel()
	_, ok := LookupEventType("corpus.note.changed")
	require.True(t, ok)
	_, ok = LookupEventType("corpus.note.exploded")
	require.False(t, ok)
	require.Equal(t, []string{"code.issued", "code.redeemed", "code.revoked"}, ExpandGlobs([]string{"code.*"}))
	require.Len(t, ExpandGlobs([]string{"*"}), len(EventTypes()))
	require.Len(t, ExpandGlobs([]string{"*"}, Webhook), 39)
	require.Empty(t, ExpandGlobs([]string{"nothing.*"}))
}
