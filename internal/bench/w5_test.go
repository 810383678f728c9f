package bench

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestW5AnswersRepeatAfterARestart: a receiver's answers are a seeded
// sequence that begins again at each phase, so the phases with and
// without the sick endpoints meet the same failures at each endpoint;
// another receiver's sequence differs.
func TestW5AnswersRepeatAfterARestart(t *testing.T) {
	t.Parallel()
	m := ReceiverModel{MaxInFlight: 1, FailRate: 0.3, ThrottleRate: 0.3}
	statuses := func(a *w5Answers) []int {
		respond := w5Respond(m, a)
		var out []int
		for i := 0; i < 64; i++ {
			rec := httptest.NewRecorder()
			respond(rec, httptest.NewRequest(http.MethodPost, "/", nil), int64(i))
			out = append(out, rec.Code)
		}
		return out
	}
	a := newW5Answers(7)
	first := statuses(a)
	require.Contains(t, first, http.StatusInternalServerError)
	require.Contains(t, first, http.StatusTooManyRequests)
	require.Contains(t, first, http.StatusNoContent)
	require.NotEqual(t, first, statuses(a), "the sequence goes on without a restart")
	a.restart()
	require.Equal(t, first, statuses(a), "a restart begins the same sequence")
	require.NotEqual(t, first, statuses(newW5Answers(8)), "each receiver has its own sequence")
}
