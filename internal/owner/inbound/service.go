package inbound

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// Errors of the admin use cases.
var (
	// ErrSourceInUse (409): a supplier connection still uses the source.
	ErrSourceInUse = domain.Conflict("INBOUND_SOURCE_IN_USE", "a supplier connection uses this source; remove the connection first")
	// ErrSecretRequired (400): the kind does not generate its secret.
	ErrSecretRequired = domain.Validation("INBOUND_SECRET_REQUIRED", "this verifier kind takes the provider's secret; give it in \"secret\"").WithField("secret")
	// ErrVerifierImmutable (400): a source's kind never changes.
	ErrVerifierImmutable = domain.Validation("INBOUND_VERIFIER_IMMUTABLE", "a source's verifier kind cannot change; create a new source").WithField("verifier")
	// ErrMessageNotFound (404): no such inbox message in the source.
	ErrMessageNotFound = domain.NotFound("INBOUND_MESSAGE_NOT_FOUND", "no such inbound message")
	// ErrNotDead (409): only dead letters can be replayed.
	ErrNotDead = domain.Conflict("INBOUND_MESSAGE_NOT_DEAD", "the message is not a dead letter")
)

// optionTolerance is the option through which kinds that sign a timestamp
// take their window; the service keeps it equal to the source's tolerance.
const optionTolerance = "tolerance_seconds"

// ServiceDeps are what the admin use cases are built from.
type ServiceDeps struct {
	UoW       UnitOfWork
	Verifiers *verifier.Registry
	Seal      SealFunc
	Clock     domain.Clock
	Policy    RetryPolicy
	// Retention is how long a processed message stays in the inbox, its
	// id still deduplicating a redelivery (30 days when zero; the server
	// passes STANDMEET_EVENT_RETENTION). Dead letters stay until replayed.
	Retention time.Duration
	// Cache, when set, is the gateway's source cache: a source changed here
	// is forgotten there at once (other replicas see the change within
	// SourceCacheTTL).
	Cache *SourceCache
	// Refusals keeps the requests the gateway refused; nil lists none.
	Refusals RefusalStore
	// Stats reads the inbound charts; nil reads none (empty charts).
	Stats StatsReader
}

// DefaultInboxRetention is ServiceDeps.Retention when none is given.
const DefaultInboxRetention = 30 * 24 * time.Hour

// Service holds the admin use cases of inbound sources, their inbox and dead
// letters. Every one is scoped by the calling owner.
type Service struct {
	d ServiceDeps
}

// NewService builds the service.
func NewService(d ServiceDeps) *Service {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	if d.Policy.MaxAttempts == 0 {
		d.Policy = DefaultRetryPolicy()
	}
	if d.Retention <= 0 {
		d.Retention = DefaultInboxRetention
	}
	return &Service{d: d}
}

// CreateSource creates a source: the kind's options normalized, the secret
// generated (when the kind does and none is given) or checked, then sealed.
// The answer carries a generated secret this once.
func (s *Service) CreateSource(ctx context.Context, ownerID uuid.UUID, in CreateSourceInput) (CreatedSource, error) {
	name, err := validName(in.Name)
	if err != nil {
		return CreatedSource{}, err
	}
	factory, err := s.d.Verifiers.Lookup(in.Verifier)
	if err != nil {
		return CreatedSource{}, withField(err, "verifier")
	}
	limit, err := bodyLimit(in.BodyLimitBytes)
	if err != nil {
		return CreatedSource{}, err
	}
	var tolerance *int
	if in.ToleranceSeconds != 0 {
		tolerance = &in.ToleranceSeconds
	}
	opts, tol, err := normalizeOptions(factory, in.Options, tolerance)
	if err != nil {
		return CreatedSource{}, err
	}
	secret, generated, err := newSecret(factory, in.Secret)
	if err != nil {
		return CreatedSource{}, err
	}
	now := s.d.Clock.Now()
	src := Source{
		ID:               newID(),
		OwnerID:          ownerID,
		Name:             name,
		Verifier:         in.Verifier,
		Options:          opts,
		Enabled:          in.Enabled == nil || *in.Enabled,
		RecordEvents:     in.RecordEvents == nil || *in.RecordEvents,
		BodyLimit:        limit,
		ToleranceSeconds: tol,
		CreatedAt:        now,
		UpdatedAt:        now,
	}
	if src.SealedSecret, err = s.d.Seal(secret, src.ID[:]); err != nil {
		return CreatedSource{}, fmt.Errorf("seal inbound source secret: %w", err)
	}
	if err := s.d.UoW.Do(ctx, func(tx Tx) error { return tx.Sources().Insert(ctx, src) }); err != nil {
		return CreatedSource{}, fmt.Errorf("create inbound source: %w", err)
	}
	view, err := viewOf(src)
	if err != nil {
		return CreatedSource{}, err
	}
	out := CreatedSource{SourceView: view}
	if generated {
		out.Secret = string(secret)
	}
	return out, nil
}

// GetSource returns one source.
func (s *Service) GetSource(ctx context.Context, ownerID, id uuid.UUID) (SourceView, error) {
	var src Source
	err := s.d.UoW.Do(ctx, func(tx Tx) error {
		var err error
		src, err = tx.Sources().Get(ctx, ownerID, id)
		return err
	})
	if err != nil {
		return SourceView{}, sourceErr(err)
	}
	return viewOf(src)
}

// ListSources pages through the owner's sources, newest first.
func (s *Service) ListSources(ctx context.Context, ownerID uuid.UUID, in op.PageInput) (op.Page[SourceView], error) {
	after, err := ParseCursor(in.Cursor)
	if err != nil {
		return op.Page[SourceView]{}, err
	}
	limit := in.NormalizedLimit()
	var rows []Source
	err = s.d.UoW.Do(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.Sources().List(ctx, ownerID, PageQuery{Limit: limit, After: after})
		return err
	})
	if err != nil {
		return op.Page[SourceView]{}, fmt.Errorf("list inbound sources: %w", err)
	}
	var viewErr error
	page := pageOf(rows, limit, func(src Source) SourceView {
		v, err := viewOf(src)
		if err != nil && viewErr == nil {
			viewErr = err
		}
		return v
	}, func(s Source) Cursor { return Cursor{At: s.CreatedAt, ID: s.ID} })
	if viewErr != nil {
		return op.Page[SourceView]{}, viewErr
	}
	return page, nil
}

// UpdateSource changes a source's name, options, enabled flag, body limit or
// tolerance. Its kind never changes.
func (s *Service) UpdateSource(ctx context.Context, ownerID uuid.UUID, in UpdateSourceInput) (SourceView, error) {
	var out Source
	err := s.d.UoW.Do(ctx, func(tx Tx) error {
		return tx.Sources().Update(ctx, ownerID, in.ID, func(src *Source) error {
			var err error
			if in.Verifier != nil && *in.Verifier != src.Verifier {
				return ErrVerifierImmutable
			}
			if in.Name != nil {
				if src.Name, err = validName(*in.Name); err != nil {
					return err
				}
			}
			if in.Enabled != nil {
				src.Enabled = *in.Enabled
			}
			if in.RecordEvents != nil {
				src.RecordEvents = *in.RecordEvents
			}
			if in.BodyLimitBytes != nil {
				if src.BodyLimit, err = bodyLimit(*in.BodyLimitBytes); err != nil {
					return err
				}
			}
			if in.Options != nil || in.ToleranceSeconds != nil {
				factory, err := s.d.Verifiers.Lookup(src.Verifier)
				if err != nil {
					return fmt.Errorf("inbound source %s: %w", src.ID, verifier.ErrMisconfigured)
				}
				opts, err := patchOptions(src.Options, in.Options)
				if err != nil {
					return err
				}
				tolerance := in.ToleranceSeconds
				if tolerance == nil {
					if _, given := in.Options[optionTolerance]; !given {
						tolerance = &src.ToleranceSeconds
					}
				}
				if src.Options, src.ToleranceSeconds, err = normalizeOptions(factory, opts, tolerance); err != nil {
					return err
				}
			}
			src.UpdatedAt = s.d.Clock.Now()
			out = *src
			return nil
		})
	})
	s.forget(in.ID)
	if err != nil {
		return SourceView{}, sourceErr(err)
	}
	return viewOf(out)
}

// forget drops a source from the gateway's cache after a change (or a
// failed one: forgetting costs one lookup).
func (s *Service) forget(id uuid.UUID) {
	if s.d.Cache != nil {
		s.d.Cache.Forget(id)
	}
}

// DeleteSource removes a source and its inbox. A source a supplier
// connection uses is refused (ErrSourceInUse).
func (s *Service) DeleteSource(ctx context.Context, ownerID, id uuid.UUID) error {
	err := s.d.UoW.Do(ctx, func(tx Tx) error { return tx.Sources().Delete(ctx, ownerID, id) })
	s.forget(id)
	if err != nil {
		return sourceErr(err)
	}
	return nil
}

// RotateSecret replaces a source's secret: the given one (checked), or a
// generated one for kinds that generate theirs, shown this once. The secret
// replaced keeps verifying for SecretGrace, so the sender can switch without
// losing messages; a previous secret still in its grace is dropped at once.
func (s *Service) RotateSecret(ctx context.Context, ownerID uuid.UUID, in RotateSecretInput) (RotatedSecret, error) {
	var out RotatedSecret
	err := s.d.UoW.Do(ctx, func(tx Tx) error {
		return tx.Sources().Update(ctx, ownerID, in.ID, func(src *Source) error {
			factory, err := s.d.Verifiers.Lookup(src.Verifier)
			if err != nil {
				return fmt.Errorf("inbound source %s: %w", src.ID, verifier.ErrMisconfigured)
			}
			secret, generated, err := newSecret(factory, in.Secret)
			if err != nil {
				return err
			}
			sealed, err := s.d.Seal(secret, src.ID[:])
			if err != nil {
				return fmt.Errorf("seal inbound source secret: %w", err)
			}
			src.RotateSecret(sealed, s.d.Clock.Now())
			out = RotatedSecret{SecretRotatedAt: src.SecretRotatedAt, PreviousSecretExpiresAt: src.PreviousSecretExpiresAt}
			if generated {
				text := string(secret)
				out.Secret = &text
			}
			return nil
		})
	})
	s.forget(in.ID)
	if err != nil {
		return RotatedSecret{}, sourceErr(err)
	}
	return out, nil
}

// ListRefusals returns the source's most recent refused requests (at most
// RefusalsKept, of the last RefusalRetention), newest first.
func (s *Service) ListRefusals(ctx context.Context, ownerID, id uuid.UUID) (RefusalList, error) {
	if _, err := s.GetSource(ctx, ownerID, id); err != nil {
		return RefusalList{}, err
	}
	out := RefusalList{Data: []RefusalView{}}
	if s.d.Refusals == nil {
		return out, nil
	}
	rs, err := s.d.Refusals.ListRefusals(ctx, ownerID, id, RefusalsKept)
	if err != nil {
		return RefusalList{}, fmt.Errorf("list inbound refusals: %w", err)
	}
	since := s.d.Clock.Now().Add(-RefusalRetention)
	for _, r := range rs {
		if r.At.After(since) {
			out.Data = append(out.Data, RefusalView{At: r.At, Reason: r.Reason, Detail: r.Detail})
		}
	}
	return out, nil
}

// ListMessages pages through a source's inbox, newest first, optionally only
// the messages in one state.
func (s *Service) ListMessages(ctx context.Context, ownerID uuid.UUID, in ListMessagesInput) (op.Page[MessageView], error) {
	state := State(in.State)
	if state != "" && !state.Valid() {
		return op.Page[MessageView]{}, domain.Validation("INVALID_STATE", "state must be received, processing, done or dead").WithField("state")
	}
	return s.listMessages(ctx, ownerID, in.ID, state, in.PageInput)
}

// ListDeadLetters pages through a source's dead letters, newest first
// (received_at), with their last error.
func (s *Service) ListDeadLetters(ctx context.Context, ownerID uuid.UUID, in ListDeadLettersInput) (op.Page[MessageView], error) {
	return s.listMessages(ctx, ownerID, in.ID, StateDead, in.PageInput)
}

func (s *Service) listMessages(ctx context.Context, ownerID, sourceID uuid.UUID, state State, page op.PageInput) (op.Page[MessageView], error) {
	after, err := ParseCursor(page.Cursor)
	if err != nil {
		return op.Page[MessageView]{}, err
	}
	limit := page.NormalizedLimit()
	var rows []Record
	err = s.d.UoW.Do(ctx, func(tx Tx) error {
		if _, err := tx.Sources().Get(ctx, ownerID, sourceID); err != nil {
			return err
		}
		var err error
		rows, err = tx.Inbox().List(ctx, ownerID, sourceID, state, PageQuery{Limit: limit, After: after})
		return err
	})
	if err != nil {
		return op.Page[MessageView]{}, sourceErr(err)
	}
	return pageOf(rows, limit, messageViewOf, func(r Record) Cursor { return Cursor{At: r.ReceivedAt, ID: r.ID} }), nil
}

// GetMessage returns one inbox message of a source with its headers and body.
func (s *Service) GetMessage(ctx context.Context, ownerID uuid.UUID, in MessageInput) (MessageDetail, error) {
	var rec Record
	err := s.d.UoW.Do(ctx, func(tx Tx) error {
		var err error
		rec, err = tx.Inbox().Get(ctx, ownerID, in.MessageID)
		return err
	})
	if err != nil || rec.SourceID != in.ID {
		if err == nil || errors.Is(err, domain.ErrNotFound) {
			return MessageDetail{}, ErrMessageNotFound
		}
		return MessageDetail{}, fmt.Errorf("get inbound message: %w", err)
	}
	return messageDetailOf(rec), nil
}

// ReplayDeadLetter makes one dead letter pending again with a new processing
// job. With reset (the default) it gets every attempt again; without, the
// attempts it had left, at least one.
func (s *Service) ReplayDeadLetter(ctx context.Context, ownerID uuid.UUID, in ReplayDeadLetterInput) (MessageView, error) {
	if in.MessageID == uuid.Nil {
		return MessageView{}, ErrMessageNotFound
	}
	var rec Record
	err := s.d.UoW.Do(ctx, func(tx Tx) error {
		cur, err := tx.Inbox().Get(ctx, ownerID, in.MessageID)
		if err != nil || cur.SourceID != in.ID {
			if err == nil || errors.Is(err, domain.ErrNotFound) {
				return ErrMessageNotFound
			}
			return err
		}
		if cur.State != StateDead {
			return ErrNotDead
		}
		if _, err := s.revive(ctx, tx, ownerID, in.ID, in.MessageID, in.ResetAttempts); err != nil {
			return err
		}
		rec, err = tx.Inbox().Get(ctx, ownerID, in.MessageID)
		return err
	})
	if err != nil {
		return MessageView{}, sourceErr(err)
	}
	return messageViewOf(rec), nil
}

// ReplayDeadLetters replays every dead letter of a source at once.
func (s *Service) ReplayDeadLetters(ctx context.Context, ownerID uuid.UUID, in ReplayDeadLettersInput) (ReplayCount, error) {
	var n int
	err := s.d.UoW.Do(ctx, func(tx Tx) error {
		if err := tx.Sources().Lock(ctx, ownerID, in.ID); err != nil {
			return err
		}
		var err error
		n, err = s.revive(ctx, tx, ownerID, in.ID, uuid.Nil, in.ResetAttempts)
		return err
	})
	if err != nil {
		return ReplayCount{}, sourceErr(err)
	}
	return ReplayCount{Count: n}, nil
}

func (s *Service) revive(ctx context.Context, tx Tx, ownerID, sourceID, id uuid.UUID, reset *bool) (int, error) {
	revived, err := tx.Inbox().Revive(ctx, ownerID, sourceID, id, reset == nil || *reset, s.d.Policy.MaxAttempts, s.d.Clock.Now())
	if err != nil {
		return 0, err
	}
	if len(revived) == 0 {
		return 0, nil
	}
	jobs := make([]ProcessJob, len(revived))
	for i, r := range revived {
		jobs[i] = ProcessJob{MessageID: r.ID, MaxAttempts: r.MaxAttempts}
	}
	if err := tx.Jobs().EnqueueProcess(ctx, jobs...); err != nil {
		return 0, err
	}
	return len(revived), nil
}

// purgeBatch is how many rows one purge transaction deletes at most.
const purgeBatch = 5000

// purgeInBatches runs del, each time in a transaction of its own, until it
// deletes fewer than purgeBatch rows, and returns how many it deleted.
func (s *Service) purgeInBatches(ctx context.Context, del func(tx Tx, limit int) (int64, error)) (int64, error) {
	var total int64
	for {
		var n int64
		err := s.d.UoW.Do(ctx, func(tx Tx) error {
			var err error
			n, err = del(tx, purgeBatch)
			return err
		})
		if err != nil {
			return total, err // the failed batch rolled back
		}
		total += n
		if n < purgeBatch {
			return total, nil
		}
	}
}

// PurgeReplays deletes expired replay keys in batches and returns how many
// it deleted. The periodic maintenance job calls it.
func (s *Service) PurgeReplays(ctx context.Context) (int64, error) {
	n, err := s.purgeInBatches(ctx, func(tx Tx, limit int) (int64, error) {
		return tx.Replays().PurgeExpired(ctx, s.d.Clock.Now(), limit)
	})
	if err != nil {
		return n, fmt.Errorf("purge inbound replay keys: %w", err)
	}
	return n, nil
}

// PurgeInbox deletes, in batches, the messages processed longer ago than
// the retention and returns how many. Their ids no longer deduplicate: a
// sender redelivering a message after the retention (30 days by default;
// providers retry for days at most) has it processed again. Dead letters
// and unprocessed messages stay, however old: they are the owner's to
// replay or to read.
func (s *Service) PurgeInbox(ctx context.Context) (int64, error) {
	before := s.d.Clock.Now().Add(-s.d.Retention)
	n, err := s.purgeInBatches(ctx, func(tx Tx, limit int) (int64, error) {
		return tx.Inbox().PurgeDone(ctx, before, limit)
	})
	if err != nil {
		return n, fmt.Errorf("purge processed inbound messages: %w", err)
	}
	return n, nil
}

// Maintain runs the periodic upkeep of the inbound tables: expired replay
// keys, processed messages past the retention and previous secrets past
// their grace. It returns how many replay keys and messages it deleted.
func (s *Service) Maintain(ctx context.Context) (replayKeys, messages int64, err error) {
	replayKeys, err = s.PurgeReplays(ctx)
	if err != nil {
		return replayKeys, 0, err
	}
	err = s.d.UoW.Do(ctx, func(tx Tx) error {
		_, err := tx.Sources().DropExpiredPreviousSecrets(ctx, s.d.Clock.Now())
		return err
	})
	if err != nil {
		return replayKeys, 0, fmt.Errorf("drop expired previous inbound secrets: %w", err)
	}
	if s.d.Refusals != nil {
		if _, err := s.d.Refusals.PurgeRefusals(ctx, s.d.Clock.Now().Add(-RefusalRetention)); err != nil {
			return replayKeys, 0, fmt.Errorf("purge inbound refusals: %w", err)
		}
	}
	messages, err = s.PurgeInbox(ctx)
	return replayKeys, messages, err
}

// sourceErr keeps domain errors and turns a bare not-found into the
// source's own.
func sourceErr(err error) error {
	if de := domain.AsError(err); de != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return ErrSourceNotFound
		}
		return err
	}
	return err
}

func validName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > MaxNameLen {
		return "", domain.Validation("INVALID_NAME", fmt.Sprintf("name must be 1..%d characters", MaxNameLen)).WithField("name")
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return "", domain.Validation("INVALID_NAME", "name must not contain control characters").WithField("name")
		}
	}
	return name, nil
}

func bodyLimit(n int64) (int64, error) {
	switch {
	case n == 0:
		return DefaultBodyLimit, nil
	case n < 0 || n > MaxBodyLimit:
		return 0, domain.Validation("INVALID_BODY_LIMIT", fmt.Sprintf("body_limit_bytes must be 1..%d", MaxBodyLimit)).WithField("body_limit_bytes")
	}
	return n, nil
}

func toleranceOf(n int) (int, error) {
	if n < 1 || n > MaxToleranceSeconds {
		return 0, domain.Validation("INVALID_TOLERANCE", fmt.Sprintf("tolerance_seconds must be 1..%d", MaxToleranceSeconds)).WithField("tolerance_seconds")
	}
	return n, nil
}

// newSecret returns the given secret checked by the kind, or a generated one
// when none is given and the kind generates its secret.
func newSecret(f verifier.Factory, given string) (secret []byte, generated bool, err error) {
	if given != "" {
		if err := f.ValidateSecret([]byte(given)); err != nil {
			return nil, false, withField(err, "secret")
		}
		return []byte(given), false, nil
	}
	if !f.GeneratesSecret() {
		return nil, false, ErrSecretRequired
	}
	secret, err = f.NewSecret()
	if err != nil {
		return nil, false, fmt.Errorf("generate inbound source secret: %w", err)
	}
	return secret, true, nil
}

// normalizeOptions validates opts with the kind and settles the tolerance:
// the given one, else the options' tolerance_seconds, else the default. For
// kinds whose normalized options carry tolerance_seconds (they sign a
// timestamp), the option is set to the source's tolerance, so the source
// has one window, validated by the kind too.
func normalizeOptions(f verifier.Factory, opts map[string]json.RawMessage, tolerance *int) (json.RawMessage, int, error) {
	opts = cloneOptions(opts)
	if raw, ok := opts[optionTolerance]; ok {
		delete(opts, optionTolerance)
		var fromOpts int
		if err := json.Unmarshal(raw, &fromOpts); err != nil && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return nil, 0, domain.Validation("INVALID_TOLERANCE", "tolerance_seconds must be an integer").WithField("tolerance_seconds")
		}
		if tolerance != nil && fromOpts != 0 && fromOpts != *tolerance {
			return nil, 0, domain.Validation("INVALID_TOLERANCE", "tolerance_seconds given twice with different values").WithField("tolerance_seconds")
		}
		if tolerance == nil && fromOpts != 0 {
			tolerance = &fromOpts
		}
	}
	tol := DefaultToleranceSeconds
	if tolerance != nil {
		var err error
		if tol, err = toleranceOf(*tolerance); err != nil {
			return nil, 0, err
		}
	}
	raw, err := encodeOptions(opts)
	if err != nil {
		return nil, 0, err
	}
	norm, err := f.ValidateOptions(raw)
	if err != nil {
		return nil, 0, optionsErr(err)
	}
	var normalized map[string]json.RawMessage
	if err := json.Unmarshal(norm, &normalized); err != nil {
		return nil, 0, fmt.Errorf("verifier returned options that are not an object: %w", err)
	}
	if _, usesWindow := normalized[optionTolerance]; !usesWindow {
		return norm, tol, nil
	}
	normalized[optionTolerance] = json.RawMessage(fmt.Sprint(tol))
	raw, err = encodeOptions(normalized)
	if err != nil {
		return nil, 0, err
	}
	if norm, err = f.ValidateOptions(raw); err != nil {
		return nil, 0, optionsErr(err)
	}
	return norm, tol, nil
}

// patchOptions applies a patch to stored options: null removes a member.
// The derived tolerance_seconds is dropped; normalizeOptions sets it again.
func patchOptions(stored json.RawMessage, patch map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	opts := map[string]json.RawMessage{}
	if len(stored) > 0 {
		if err := json.Unmarshal(stored, &opts); err != nil {
			return nil, fmt.Errorf("stored inbound options are not an object: %w", err)
		}
	}
	delete(opts, optionTolerance)
	for k, v := range patch {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(opts, k)
			continue
		}
		opts[k] = v
	}
	return opts, nil
}

func cloneOptions(in map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func encodeOptions(opts map[string]json.RawMessage) (json.RawMessage, error) {
	if len(opts) == 0 {
		return json.RawMessage("{}"), nil
	}
	b, err := json.Marshal(opts)
	if err != nil {
		return nil, domain.Validation("INBOUND_OPTIONS_INVALID", "options are not valid JSON")
	}
	return b, nil
}

func optionsErr(err error) error { return withField(err, "options") }

// withField names the input field at fault on a domain error.
func withField(err error, field string) error {
	if de := domain.AsError(err); de != nil {
		return de.WithField(field)
	}
	return err
}
