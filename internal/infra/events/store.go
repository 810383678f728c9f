package events

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Errors of the Store. The adapter maps them to domain errors.
var (
	// ErrNotFound: no such event for this owner (another owner's event is
	// not found either).
	ErrNotFound = errors.New("event not found")
	// ErrNotPoisoned: Release of an event that is not poisoned.
	ErrNotPoisoned = errors.New("event is not poisoned")
	// ErrBadCursor: a cursor this store did not hand out.
	ErrBadCursor = errors.New("malformed cursor")
)

// Event is a row of the events table as the admin listings show it.
type Event struct {
	ID            uuid.UUID
	OwnerID       uuid.UUID
	Type          string
	Subject       string
	OccurredAt    time.Time
	Data          json.RawMessage
	FannedOutAt   *time.Time
	Fanout        json.RawMessage
	RelayAttempts int
	RelayError    *string
	PoisonedAt    *time.Time
}

// Store reads events for the admin ops, always scoped by owner.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore returns a Store over pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const eventColumns = `id, owner_id, type, subject, occurred_at, data, fanned_out_at, fanout,
relay_attempts, relay_error, poisoned_at`

// Page is one page of events and the cursor of the next one ("" at the end).
type Page struct {
	Events     []Event
	NextCursor string
	// PrevCursor, when set, pages to the newer events (Query.Before).
	PrevCursor string
}

// Query selects a page of an owner's events, newest first.
type Query struct {
	// Type keeps the events of this exact type ("" : all).
	Type string
	// Since (inclusive) and Until (exclusive) bound occurred_at.
	Since, Until *time.Time
	// Cursor pages to older events (a NextCursor); Before to newer ones (a
	// PrevCursor). At most one is set.
	Cursor, Before string
	// Limit must be positive.
	Limit int
}

// Find returns a page of ownerID's events passing q, newest first, with a
// cursor to the older page when there is one and to the newer page when
// the page does not start at the newest event.
func (s *Store) Find(ctx context.Context, ownerID uuid.UUID, q Query) (Page, error) {
	if q.Cursor != "" && q.Before != "" {
		return Page{}, ErrBadCursor
	}
	backward := q.Before != ""
	cursor := q.Cursor
	if backward {
		cursor = q.Before
	}
	at, id, err := decodeCursor(cursor)
	if err != nil {
		return Page{}, err
	}
	args := []any{ownerID, q.Limit + 1}
	where := `owner_id = $1`
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.Type != "" {
		where += ` AND type = ` + arg(q.Type)
	}
	if q.Since != nil {
		where += ` AND occurred_at >= ` + arg(*q.Since)
	}
	if q.Until != nil {
		where += ` AND occurred_at < ` + arg(*q.Until)
	}
	order := `occurred_at DESC, id DESC`
	if at != nil {
		cmp := `<`
		if backward {
			cmp, order = `>`, `occurred_at ASC, id ASC`
		}
		where += ` AND (occurred_at, id) ` + cmp + ` (` + arg(*at) + `, ` + arg(*id) + `)`
	}
	evs, err := s.query(ctx, `SELECT `+eventColumns+` FROM events WHERE `+where+` ORDER BY `+order+` LIMIT $2`, args...)
	if err != nil {
		return Page{}, fmt.Errorf("find events: %w", err)
	}
	more := len(evs) > q.Limit
	if more {
		evs = evs[:q.Limit]
	}
	if backward {
		for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
			evs[i], evs[j] = evs[j], evs[i]
		}
	}
	p := Page{Events: evs}
	if p.Events == nil {
		p.Events = []Event{}
	}
	if len(evs) == 0 {
		return p, nil
	}
	first, last := evs[0], evs[len(evs)-1]
	// Going forward, the rows past the page are older; going backward,
	// newer. The page we came from lies on the other side.
	if backward {
		p.NextCursor = encodeCursor(last.OccurredAt, last.ID)
		if more {
			p.PrevCursor = encodeCursor(first.OccurredAt, first.ID)
		}
	} else {
		if more {
			p.NextCursor = encodeCursor(last.OccurredAt, last.ID)
		}
		if at != nil {
			p.PrevCursor = encodeCursor(first.OccurredAt, first.ID)
		}
	}
	return p, nil
}

// List returns ownerID's events newest first, only those of eventType when
// it is not empty. limit must be positive; cursor is "" or a NextCursor.
func (s *Store) List(ctx context.Context, ownerID uuid.UUID, eventType string, limit int, cursor string) (Page, error) {
	at, id, err := decodeCursor(cursor)
	if err != nil {
		return Page{}, err
	}
	// The filters are spelled into the SQL only when present (rather than
	// "$2 IS NULL OR …"), so each shape keeps a plan that walks its index.
	args := []any{ownerID, limit + 1}
	where := `owner_id = $1`
	if eventType != "" {
		args = append(args, eventType)
		where += fmt.Sprintf(` AND type = $%d`, len(args))
	}
	if at != nil {
		args = append(args, *at, *id)
		where += fmt.Sprintf(` AND (occurred_at, id) < ($%d, $%d)`, len(args)-1, len(args))
	}
	q := `SELECT ` + eventColumns + ` FROM events WHERE ` + where + `
ORDER BY occurred_at DESC, id DESC LIMIT $2`
	evs, err := s.query(ctx, q, args...)
	if err != nil {
		return Page{}, fmt.Errorf("list events: %w", err)
	}
	return page(evs, limit, func(e Event) time.Time { return e.OccurredAt }), nil
}

// ListPoisoned returns ownerID's poisoned events, most recently poisoned
// first.
func (s *Store) ListPoisoned(ctx context.Context, ownerID uuid.UUID, limit int, cursor string) (Page, error) {
	at, id, err := decodeCursor(cursor)
	if err != nil {
		return Page{}, err
	}
	args := []any{ownerID, limit + 1}
	where := `poisoned_at IS NOT NULL AND owner_id = $1`
	if at != nil {
		args = append(args, *at, *id)
		where += ` AND (poisoned_at, id) < ($3, $4)`
	}
	q := `SELECT ` + eventColumns + ` FROM events WHERE ` + where + `
ORDER BY poisoned_at DESC, id DESC LIMIT $2`
	evs, err := s.query(ctx, q, args...)
	if err != nil {
		return Page{}, fmt.Errorf("list poisoned events: %w", err)
	}
	return page(evs, limit, func(e Event) time.Time { return *e.PoisonedAt }), nil
}

// Get returns one of ownerID's events.
func (s *Store) Get(ctx context.Context, ownerID, eventID uuid.UUID) (Event, error) {
	evs, err := s.query(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1 AND owner_id = $2`, eventID, ownerID)
	if err != nil {
		return Event{}, fmt.Errorf("get event: %w", err)
	}
	if len(evs) == 0 {
		return Event{}, ErrNotFound
	}
	return evs[0], nil
}

// Release gives a poisoned event of ownerID's another chance: it clears
// poisoned_at and the attempt count (the last error stays for the record)
// and wakes the relay, in one transaction. It returns the event as it now is.
func (s *Store) Release(ctx context.Context, ownerID, eventID uuid.UUID) (Event, error) {
	var ev Event
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE events
SET poisoned_at = NULL, relay_attempts = 0, relay_retry_at = NULL
WHERE id = $1 AND owner_id = $2 AND poisoned_at IS NOT NULL
RETURNING `+eventColumns, eventID, ownerID)
		if err != nil {
			return err
		}
		evs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Event])
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE id = $1 AND owner_id = $2)`,
				eventID, ownerID).Scan(&exists); err != nil {
				return err
			}
			if exists {
				return ErrNotPoisoned
			}
			return ErrNotFound
		}
		ev = evs[0]
		_, err = tx.Exec(ctx, `SELECT pg_notify('`+Channel+`', '')`)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotPoisoned) {
			return Event{}, err
		}
		return Event{}, fmt.Errorf("release event %s: %w", eventID, err)
	}
	return ev, nil
}

func (s *Store) query(ctx context.Context, q string, args ...any) ([]Event, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Event])
}

// page trims a limit+1 fetch and encodes the next cursor from the last kept
// row's sort key.
func page(evs []Event, limit int, key func(Event) time.Time) Page {
	p := Page{Events: evs}
	if len(evs) > limit {
		p.Events = evs[:limit]
		last := p.Events[limit-1]
		p.NextCursor = encodeCursor(key(last), last.ID)
	}
	if p.Events == nil {
		p.Events = []Event{}
	}
	return p
}

// A cursor is the sort key of the last row of a page: its timestamp and id,
// base64url-encoded so clients treat it as opaque.
func encodeCursor(at time.Time, id uuid.UUID) string {
	return base64.RawURLEncoding.EncodeToString([]byte(at.UTC().Format(time.RFC3339Nano) + "," + id.String()))
}

// decodeCursor returns nil pointers for the empty cursor (the first page).
func decodeCursor(c string) (*time.Time, *uuid.UUID, error) {
	if c == "" {
		return nil, nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, nil, ErrBadCursor
	}
	ts, idText, ok := strings.Cut(string(raw), ",")
	if !ok {
		return nil, nil, ErrBadCursor
	}
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return nil, nil, ErrBadCursor
	}
	id, err := uuid.Parse(idText)
	if err != nil {
		return nil, nil, ErrBadCursor
	}
	return &at, &id, nil
}
