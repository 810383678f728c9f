package riverjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Job is one River job as its owner reads it: what River knows about its
// runs, and its args.
type Job struct {
	ID          int64           `json:"id"`
	Kind        string          `json:"kind"`
	Queue       string          `json:"queue"`
	State       string          `json:"state"`
	Attempt     int             `json:"attempt"`
	MaxAttempts int             `json:"max_attempts" doc:"the attempt bound that applies: for a delivery, min(its endpoint's max_attempts, River's bound)"`
	Args        json.RawMessage `json:"args"`
	Errors      []JobError      `json:"errors"`
	CreatedAt   time.Time       `json:"created_at"`
	ScheduledAt time.Time       `json:"scheduled_at"`
	AttemptedAt *time.Time      `json:"attempted_at"`
	FinalizedAt *time.Time      `json:"finalized_at"`
}

// JobError is one failed attempt of a job.
type JobError struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error"`
}

// JobInput names a job by River's id.
type JobInput struct {
	ID int64 `json:"id" path:"id" doc:"River's job id (the job=<id> of a delivery's task_url)"`
}

// JobOps declares jobs.get: one job of the caller's, read through River's
// client. River's own UI shows every owner's jobs, so it is the operator's
// only; this op is how every owner reads their own.
func JobOps(client *river.Client[pgx.Tx], pool *pgxpool.Pool) op.Set {
	return op.Set{
		op.New(op.Meta{
			Name:    "jobs.get",
			Scopes:  op.Reads,
			Summary: "One of your River jobs: state, attempts, errors, args, timestamps",
			Description: "The job a delivery's or inbound message's task_url names. A job belongs to the owner of " +
				"every endpoint, event or inbound message its args name; another owner's job, and a job of the " +
				"instance's own housekeeping, is not found.",
		}, func(ctx context.Context, c op.Caller, in JobInput) (Job, error) {
			return getJob(ctx, client, pool, c.OwnerID, in.ID)
		}),
	}
}

var errNoJob = domain.NotFound("NOT_FOUND", "no such job")

func getJob(ctx context.Context, client *river.Client[pgx.Tx], pool *pgxpool.Pool, ownerID uuid.UUID, id int64) (Job, error) {
	row, err := client.JobGet(ctx, id)
	if errors.Is(err, rivertype.ErrNotFound) {
		return Job{}, errNoJob
	}
	if err != nil {
		return Job{}, fmt.Errorf("get job %d: %w", id, err)
	}
	owned, bound, err := ownsJobArgs(ctx, pool, ownerID, row.EncodedArgs)
	if err != nil {
		return Job{}, err
	}
	if !owned {
		return Job{}, errNoJob
	}
	j := Job{
		ID: row.ID, Kind: row.Kind, Queue: row.Queue, State: string(row.State),
		Attempt: row.Attempt, MaxAttempts: row.MaxAttempts, Args: json.RawMessage(row.EncodedArgs),
		CreatedAt: row.CreatedAt.UTC(), ScheduledAt: row.ScheduledAt.UTC(),
		AttemptedAt: utcPtr(row.AttemptedAt), FinalizedAt: utcPtr(row.FinalizedAt),
		Errors: make([]JobError, 0, len(row.Errors)),
	}
	if bound > 0 && bound < j.MaxAttempts {
		j.MaxAttempts = bound
	}
	for _, e := range row.Errors {
		j.Errors = append(j.Errors, JobError{At: e.At.UTC(), Attempt: e.Attempt, Error: e.Error})
	}
	return j, nil
}

// ownedArgs are the ids a job's args may name; each names a row that
// belongs to one owner.
type ownedArgs struct {
	EndpointID *uuid.UUID `json:"endpoint_id"`
	EventID    *uuid.UUID `json:"event_id"`
	MessageID  *uuid.UUID `json:"message_id"`
}

// ownsJobArgs reports whether every id the args name belongs to ownerID,
// and there is at least one. Args naming none (housekeeping jobs) belong to
// no owner. bound is the max_attempts of the endpoint the args name (0
// without one): a delivery ends at the endpoint's bound when it is below
// River's.
func ownsJobArgs(ctx context.Context, pool *pgxpool.Pool, ownerID uuid.UUID, args []byte) (ok bool, bound int, err error) {
	var a ownedArgs
	if err := json.Unmarshal(args, &a); err != nil {
		// Args of a kind that names none of these ids in this shape.
		return false, 0, nil
	}
	if a.EndpointID == nil && a.EventID == nil && a.MessageID == nil {
		return false, 0, nil
	}
	err = pool.QueryRow(ctx, `SELECT
    ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $2 AND owner_id = $1))
AND ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM events WHERE id = $3 AND owner_id = $1))
AND ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM inbound_messages WHERE id = $4 AND owner_id = $1)),
  COALESCE((SELECT max_attempts FROM webhook_endpoints WHERE id = $2 AND owner_id = $1), 0)`,
		ownerID, a.EndpointID, a.EventID, a.MessageID).Scan(&ok, &bound)
	if err != nil {
		return false, 0, fmt.Errorf("job owner: %w", err)
	}
	return ok, bound, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
