package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// TestJobPageSaysTheStatusFirst: the job page names a job's state in an
// owner's words, River's state only beside it as a detail.
func TestJobPageSaysTheStatusFirst(t *testing.T) {
	t.Parallel()
	args, err := json.Marshal(map[string]string{"endpoint_id": uuid.NewString(), "event_id": uuid.NewString()})
	require.NoError(t, err)
	failed := []riverjob.JobError{{At: time.Now(), Attempt: 1, Error: "HTTP 500"}}
	jobs := map[int64]riverjob.Job{
		1: {ID: 1, Kind: "webhook.deliver", State: "retryable", Attempt: 1, MaxAttempts: 18, Errors: failed},
		2: {ID: 2, Kind: "webhook.deliver", State: "cancelled", Attempt: 3, MaxAttempts: 3, Errors: failed},
		3: {ID: 3, Kind: "webhook.deliver", State: "completed", Attempt: 1, MaxAttempts: 18},
		4: {ID: 4, Kind: "webhook.fanout", State: "completed", Attempt: 1, MaxAttempts: 25},
		5: {ID: 5, Kind: "webhook.deliver", State: "discarded", Attempt: 18, MaxAttempts: 18, Errors: failed},
	}
	b := setup(t, func(w *world) op.Set {
		return append(w.ops(), op.New(op.Meta{Name: "jobs.get"}, func(_ context.Context, _ op.Caller, in riverjob.JobInput) (riverjob.Job, error) {
			j, ok := jobs[in.ID]
			if !ok {
				return riverjob.Job{}, domain.NotFound("NOT_FOUND", "no such job")
			}
			j.Args, j.CreatedAt, j.ScheduledAt = args, time.Now(), time.Now()
			return j, nil
		}))
	})
	b.login(t)
	for id, want := range map[string]string{
		"1": `<span class="badge status-retrying">retrying</span> <small>River: retryable</small>`,
		"2": `<span class="badge status-failed">failed</span> <small>River: cancelled</small>`,
		"3": `<span class="badge status-delivered">delivered</span> <small>River: completed</small>`,
		"4": `<span class="badge status-done">done</span> <small>River: completed</small>`,
		"5": `<span class="badge status-failed">failed</span> <small>River: discarded</small>`,
	} {
		page := b.get(t, "/admin/jobs/"+id)
		require.Equal(t, http.StatusOK, page.status, page.body)
		require.Contains(t, page.body, want, "job %s", id)
		require.NotContains(t, page.body, `data-state="`+jobs[int64(id[0]-'0')].State+`">`+jobs[int64(id[0]-'0')].State+`<`, "job %s: River's state is not the status", id)
	}
}
