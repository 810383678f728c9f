package faults

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// jobRef is the part of our jobs' arguments the tests select on.
type jobRef struct {
	EventID    uuid.UUID `json:"event_id"`
	EndpointID uuid.UUID `json:"endpoint_id"`
	MessageID  uuid.UUID `json:"message_id"`
}

// refOf decodes the arguments of one of our jobs.
func refOf(j *rivertype.JobRow) (jobRef, error) {
	var r jobRef
	err := json.Unmarshal(j.EncodedArgs, &r)
	return r, err
}

// listJobs lists through River's client (an insert-only client on the
// fleet's database) every job params selects, oldest first. The fault tests
// call it while PostgreSQL restarts, so it returns the error for retry.
func listJobs(pool *pgxpool.Pool, params *river.JobListParams) ([]*rivertype.JobRow, error) {
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return nil, err
	}
	const page = 1000
	p := params.First(page)
	var out []*rivertype.JobRow
	for {
		res, err := client.JobList(context.Background(), p)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Jobs...)
		if len(res.Jobs) < page {
			return out, nil
		}
		p = p.After(res.LastCursor)
	}
}

// mustListJobs is listJobs for a database that is up.
func mustListJobs(t *testing.T, pool *pgxpool.Pool, params *river.JobListParams) []*rivertype.JobRow {
	t.Helper()
	jobs, err := listJobs(pool, params)
	require.NoError(t, err)
	return jobs
}
