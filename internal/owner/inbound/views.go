package inbound

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// SourceView is a source as the admin surfaces show it. The contract shows a
// source as {id, name, verifier, …verifier options, enabled}: the kind's
// options are flattened into the object (MarshalJSON), beside the fixed
// fields, which win when an option has the same name. The secret never
// appears.
type SourceView struct {
	ID       uuid.UUID `json:"id"`
	Name     string    `json:"name"`
	Verifier string    `json:"verifier"`
	// Options are the kind's normalized options, flattened when encoded.
	Options map[string]json.RawMessage `json:"-"`
	Enabled bool                       `json:"enabled"`
	// RecordEvents says whether each accepted message records
	// inbound.message.received.
	RecordEvents     bool  `json:"record_events"`
	BodyLimitBytes   int64 `json:"body_limit_bytes"`
	ToleranceSeconds int   `json:"tolerance_seconds"`
	// ReceiveURL is where the sender posts: /hooks/{id}.
	ReceiveURL string `json:"receive_url"`
	// SecretRotatedAt is when the secret was last rotated; null when never.
	SecretRotatedAt *time.Time `json:"secret_rotated_at"`
	// PreviousSecretExpiresAt is when the secret before the last rotation
	// stops verifying; null when no previous secret verifies any more.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
}

// MarshalJSON flattens the options into the object.
func (v SourceView) MarshalJSON() ([]byte, error) {
	type plain SourceView
	return flatten(plain(v), v.Options)
}

// CreatedSource is the answer to a create: the source and, when the instance
// generated it, the secret, shown this once.
type CreatedSource struct {
	SourceView
	Secret string `json:"secret,omitempty"`
}

// MarshalJSON flattens the options and adds the secret.
func (c CreatedSource) MarshalJSON() ([]byte, error) {
	type plain SourceView
	extra := map[string]json.RawMessage{}
	for k, val := range c.Options {
		extra[k] = val
	}
	if c.Secret != "" {
		s, err := json.Marshal(c.Secret)
		if err != nil {
			return nil, err
		}
		extra["secret"] = s
	}
	return flatten(plain(c.SourceView), extra)
}

// flatten encodes fixed (a struct) and adds the extra members whose names
// it does not already use.
func flatten(fixed any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(fixed)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return b, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	for k, val := range extra {
		if _, taken := obj[k]; !taken {
			obj[k] = val
		}
	}
	return json.Marshal(obj)
}

// viewOf is the owner's view of s. Stored options are an object validated on
// the way in, so failing to decode them means the row was changed behind the
// service's back: the read fails rather than showing the source without them.
func viewOf(s Source) (SourceView, error) {
	var opts map[string]json.RawMessage
	if len(s.Options) > 0 {
		if err := json.Unmarshal(s.Options, &opts); err != nil {
			return SourceView{}, fmt.Errorf("inbound source %s: stored options: %w", s.ID, err)
		}
	}
	return SourceView{
		ID:                      s.ID,
		Name:                    s.Name,
		Verifier:                s.Verifier,
		Options:                 opts,
		Enabled:                 s.Enabled,
		RecordEvents:            s.RecordEvents,
		BodyLimitBytes:          s.BodyLimit,
		ToleranceSeconds:        s.ToleranceSeconds,
		ReceiveURL:              s.ReceivePath(),
		SecretRotatedAt:         timePtr(s.SecretRotatedAt),
		PreviousSecretExpiresAt: timePtr(s.PreviousSecretExpiresAt),
		CreatedAt:               s.CreatedAt,
		UpdatedAt:               s.UpdatedAt,
	}, nil
}

// RotatedSecret is the answer to rotate-secret: the new secret when the
// instance generated it (shown this once), else null.
type RotatedSecret struct {
	Secret          *string   `json:"secret"`
	SecretRotatedAt time.Time `json:"secret_rotated_at"`
	// PreviousSecretExpiresAt is when the secret replaced stops verifying
	// (SecretGrace after the rotation).
	PreviousSecretExpiresAt time.Time `json:"previous_secret_expires_at"`
}

// MessageView is an inbox message as the admin surfaces list it.
type MessageView struct {
	ID        uuid.UUID `json:"id"`
	SourceID  uuid.UUID `json:"source_id"`
	MessageID string    `json:"message_id"`
	EventType string    `json:"event_type"`
	State     State     `json:"state"`
	// Status says what is happening: received (waiting for its first
	// attempt), processing, retrying (an attempt failed; the next is at
	// next_attempt_at), done or dead.
	Status string `json:"status"`
	// StatusDetail says it in a sentence, with the times.
	StatusDetail  string     `json:"status_detail"`
	Attempts      int        `json:"attempts"`
	LastError     *string    `json:"last_error"`
	SignedAt      *time.Time `json:"signed_at"`
	ReceivedAt    time.Time  `json:"received_at"`
	LastAttemptAt *time.Time `json:"last_attempt_at"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	DoneAt        *time.Time `json:"done_at"`
	DeadAt        *time.Time `json:"dead_at"`
	Replays       int        `json:"replays"`
	// JobID is the River job that processes the message; null for a
	// message no route wanted, admitted done with no job.
	JobID *int64 `json:"job_id"`
	// TaskURL opens the River job in the admin task UI (null without one).
	TaskURL *string `json:"task_url"`
}

// MessageDetail is one message with its headers and body. The body is text
// when it is valid UTF-8 (body_encoding "utf-8"), else standard base64.
type MessageDetail struct {
	MessageView
	Headers      map[string][]string `json:"headers"`
	Body         string              `json:"body"`
	BodyEncoding string              `json:"body_encoding"`
	PayloadSHA   string              `json:"payload_sha256"`
}

func messageViewOf(r Record) MessageView {
	v := MessageView{
		ID:            r.ID,
		SourceID:      r.SourceID,
		MessageID:     r.MessageID,
		EventType:     r.EventType,
		State:         r.State,
		Attempts:      r.Attempts,
		ReceivedAt:    r.ReceivedAt,
		SignedAt:      timePtr(r.SignedAt),
		LastAttemptAt: timePtr(r.LastAttemptAt),
		NextAttemptAt: timePtr(r.NextAttemptAt),
		DoneAt:        timePtr(r.DoneAt),
		DeadAt:        timePtr(r.DeadAt),
		Replays:       r.Replays,
	}
	if r.LastError != "" {
		e := r.LastError
		v.LastError = &e
	}
	v.Status, v.StatusDetail = statusOf(r)
	if r.JobID != 0 {
		id := r.JobID
		u := "/admin/tasks?job=" + strconv.FormatInt(id, 10)
		v.JobID, v.TaskURL = &id, &u
	}
	return v
}

func messageDetailOf(r Record) MessageDetail {
	d := MessageDetail{MessageView: messageViewOf(r), Headers: r.Headers, PayloadSHA: fmt.Sprintf("%x", r.Digest[:])}
	if d.Headers == nil {
		d.Headers = map[string][]string{}
	}
	if utf8.Valid(r.Body) && !bytes.ContainsRune(r.Body, 0) {
		d.Body, d.BodyEncoding = string(r.Body), "utf-8"
	} else {
		d.Body, d.BodyEncoding = base64.StdEncoding.EncodeToString(r.Body), "base64"
	}
	return d
}

// Message statuses (MessageView.Status).
const (
	StatusReceived   = "received"
	StatusProcessing = "processing"
	StatusRetrying   = "retrying"
	StatusDone       = "done"
	StatusDead       = "dead"
)

// statusOf says what is happening to a message.
func statusOf(r Record) (string, string) {
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	switch r.State {
	case StateProcessing:
		return StatusProcessing, fmt.Sprintf("attempt %d running since %s", r.Attempts, at(r.LastAttemptAt))
	case StateDone:
		return StatusDone, "processed at " + at(r.DoneAt)
	case StateDead:
		return StatusDead, fmt.Sprintf("dead letter since %s after %d attempt(s); replay it to try again", at(r.DeadAt), r.Attempts)
	}
	if r.Attempts > 0 && r.LastError != "" && !r.NextAttemptAt.IsZero() {
		return StatusRetrying, fmt.Sprintf("attempt %d failed; retrying at %s", r.Attempts, at(r.NextAttemptAt))
	}
	if r.Attempts > 0 {
		return StatusReceived, fmt.Sprintf("waiting for attempt %d", r.Attempts+1)
	}
	return StatusReceived, "waiting for its first attempt"
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// ReplayCount is the answer to replaying all dead letters of a source.
type ReplayCount struct {
	Count int `json:"count"`
}

func pageOf[R, V any](rows []R, limit int, view func(R) V, key func(R) Cursor) op.Page[V] {
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	p := op.Page[V]{Data: make([]V, len(rows))}
	for i, r := range rows {
		p.Data[i] = view(r)
	}
	if more && len(rows) > 0 {
		c := key(rows[len(rows)-1]).String()
		p.NextCursor = &c
	}
	return p
}
