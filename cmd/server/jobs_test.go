package main

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// jobRef is the part of our jobs' arguments the tests select on: the
// event, webhook endpoint or inbound message a job is about.
type jobRef struct {
	EventID    uuid.UUID `json:"event_id"`
	EndpointID uuid.UUID `json:"endpoint_id"`
	MessageID  uuid.UUID `json:"message_id"`
}

// jobFilter keeps the jobs whose arguments it accepts.
type jobFilter func(jobRef) bool

// forEndpoint keeps the jobs of one webhook endpoint.
func forEndpoint(id uuid.UUID) jobFilter { return func(r jobRef) bool { return r.EndpointID == id } }

// forEvents keeps the jobs of the given events.
func forEvents(ids ...uuid.UUID) jobFilter {
	set := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return func(r jobRef) bool { return set[r.EventID] }
}

// listJobs lists, through River's client, every job params selects (all
// states unless params names some) whose arguments each filter accepts,
// oldest first.
func listJobs(t *testing.T, ts *testServer, params *river.JobListParams, filters ...jobFilter) []*rivertype.JobRow {
	t.Helper()
	const page = 1000
	var out []*rivertype.JobRow
	p := params.First(page)
	for {
		res, err := ts.App.Worker.JobList(t.Context(), p)
		require.NoError(t, err)
	jobs:
		for _, j := range res.Jobs {
			var ref jobRef
			require.NoError(t, json.Unmarshal(j.EncodedArgs, &ref), "args of job %d", j.ID)
			for _, keep := range filters {
				if !keep(ref) {
					continue jobs
				}
			}
			out = append(out, j)
		}
		if len(res.Jobs) < page {
			return out
		}
		p = p.After(res.LastCursor)
	}
}

// jobsOfKind selects the jobs of one kind, in the given states (every
// state when none is given).
func jobsOfKind(kind string, states ...rivertype.JobState) *river.JobListParams {
	p := river.NewJobListParams().Kinds(kind)
	if len(states) > 0 {
		p = p.States(states...)
	}
	return p
}
