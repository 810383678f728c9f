package inbound

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// Errors of the gateway (the verifier's errors pass through unchanged:
// 401 for signatures, 400 for malformed or stale requests).
var (
	// ErrSourceNotFound (404): no such source, or it is disabled. The two are
	// not told apart, so a sender cannot probe which ids exist.
	ErrSourceNotFound = domain.NotFound("INBOUND_SOURCE_NOT_FOUND", "no such inbound source")
	// ErrBodyTooLarge (413): the body is over the source's limit.
	ErrBodyTooLarge = domain.TooLarge("PAYLOAD_TOO_LARGE", "request body is over the source's limit")
	// ErrBodyUnreadable (400): the body could not be read to its end.
	ErrBodyUnreadable = domain.Validation("BODY_UNREADABLE", "cannot read the request body")
	// ErrUnavailable (503): storage cannot be reached; nothing was stored
	// and the sender should try again later.
	ErrUnavailable = &domain.Error{Kind: domain.KindInternal, Code: "INBOUND_UNAVAILABLE", Message: "the inbox cannot be reached; retry later"}
	// ErrMessageConflict (409): a message with this id and another payload
	// was accepted before. It is refused, never overwritten.
	ErrMessageConflict = domain.Conflict("MESSAGE_ID_CONFLICT", "a message with this id and a different payload was already received")
)

// Request is an inbound HTTP request as the gateway needs it.
type Request struct {
	Headers domain.Header
	// Body is read up to the source's limit; the caller closes it.
	Body io.Reader
	// ContentLength is the declared length, -1 when unknown.
	ContentLength int64
}

// ReceiptStatus says what the gateway did with a verified message.
type ReceiptStatus int

const (
	// Accepted: a new message is in the inbox, with its job when a route
	// wants it (202).
	Accepted ReceiptStatus = iota + 1
	// Duplicate: the message was accepted before; nothing was done (200).
	Duplicate
)

// Receipt is the gateway's answer to a verified message.
type Receipt struct {
	Status ReceiptStatus
	// ID is the inbox row's id (the earlier one for a duplicate).
	ID uuid.UUID
	// MessageID is the sender's id.
	MessageID string
}

// GatewayDeps are what the gateway is built from.
type GatewayDeps struct {
	Sources SourceLookup
	Inbox   Admitter
	// Cache keeps the sources read; nil makes one of the gateway's own. The
	// composition root shares one with the Service, which forgets a source
	// it changes.
	Cache     *SourceCache
	Verifiers *verifier.Registry
	Unseal    UnsealFunc
	Clock     domain.Clock
	Policy    RetryPolicy
	// Router tells the admission whether a message needs processing; nil
	// processes every message.
	Router *Router
	// Refused, when set, hears of every request refused for its input (a
	// 4xx); OwnerID is zero for an unknown source.
	Refused func(r Refusal)
}

// Gateway verifies a request and writes it into the inbox atomically, and
// answers with a status instead of failing on bad input. It keeps the sources
// it reads for SourceCacheTTL and commits concurrent requests together.
type Gateway struct {
	d      GatewayDeps
	cache  *SourceCache
	commit *committer
}

// NewGateway builds the gateway.
func NewGateway(d GatewayDeps) *Gateway {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	if d.Policy.MaxAttempts == 0 {
		d.Policy = DefaultRetryPolicy()
	}
	c := d.Cache
	if c == nil {
		c = NewSourceCache(0)
	}
	return &Gateway{d: d, cache: c, commit: &committer{inbox: d.Inbox}}
}

// Receive runs the pipeline for one request to sourceID: source (404) →
// body limit (413) → verify (401/400) → the replay key, the inbox row and,
// when a route can want the message, its job written in one transaction
// (a message no route wants is written done), shared with the requests committing
// at the same time. It returns a Receipt (Accepted or Duplicate) once that
// transaction has committed, or a domain error; an error of kind Internal
// means storage or stored configuration failed, never the input
// (ErrUnavailable when storage cannot be reached).
func (g *Gateway) Receive(ctx context.Context, sourceID uuid.UUID, req Request) (Receipt, error) {
	var owner uuid.UUID
	var disabled bool
	r, err := g.receive(ctx, sourceID, req, &owner, &disabled)
	if err != nil && g.d.Refused != nil {
		if de := domain.AsError(err); de != nil && de.Kind != domain.KindInternal {
			ref := Refusal{OwnerID: owner, SourceID: sourceID, At: g.d.Clock.Now(), Reason: de.Code, Detail: de.Message}
			if disabled {
				ref.Reason, ref.Detail = ReasonSourceDisabled, "the source is disabled"
			}
			g.d.Refused(ref)
		}
	}
	return r, err
}

func (g *Gateway) receive(ctx context.Context, sourceID uuid.UUID, req Request, owner *uuid.UUID, disabled *bool) (Receipt, error) {
	cs, err := g.source(ctx, sourceID)
	if cs != nil {
		*owner, *disabled = cs.src.OwnerID, !cs.src.Enabled
	}
	if err != nil {
		return Receipt{}, err
	}
	src := cs.src
	body, err := readLimited(req.Body, req.ContentLength, src.BodyLimit)
	if err != nil {
		return Receipt{}, err
	}
	now := g.d.Clock.Now()
	vreq := verifier.Request{Headers: req.Headers, Body: body}
	res, err := cs.v.Verify(vreq, cs.secrets[0], now)
	if err != nil && len(cs.secrets) > 1 && errors.Is(err, verifier.ErrUnauthorized) && now.Before(src.PreviousSecretExpiresAt) {
		// The previous secret still verifies during its grace.
		res, err = cs.v.Verify(vreq, cs.secrets[1], now)
	}
	if err != nil {
		return Receipt{}, err
	}

	env := Envelope{
		ID:              newID(),
		OwnerID:         src.OwnerID,
		SourceID:        src.ID,
		MessageID:       res.MessageID,
		MessageIDSigned: res.MessageIDSigned,
		StableID:        res.StableID,
		EventType:       res.EventType,
		Digest:          DigestOf(body),
		Body:            body,
		Headers:         keptHeaders(req.Headers),
		SignedAt:        res.Timestamp,
		ReceivedAt:      now,
	}
	var need Need
	if g.d.Router != nil {
		need = g.d.Router.Need(src.Verifier, res.EventType)
	}
	adm, err := g.commit.admit(ctx, Admission{Envelope: env, ReplayExpiresAt: replayExpiry(src, res.Timestamp, now), MaxAttempts: g.d.Policy.MaxAttempts,
		Need: need, RecordEvent: src.RecordEvents})
	if err != nil {
		return Receipt{}, fmt.Errorf("store inbound message %q of source %s: %w", env.MessageID, src.ID, err)
	}
	switch {
	case adm.Conflict:
		return Receipt{}, conflict(src.ID, env.MessageID)
	case adm.Status == Duplicate:
		return Receipt{Status: Duplicate, ID: adm.ID, MessageID: env.MessageID}, nil
	}
	return Receipt{Status: Accepted, ID: adm.ID, MessageID: env.MessageID}, nil
}

// conflict wraps ErrMessageConflict with what an operator needs in the log;
// the HTTP answer shows only the sentinel's message.
func conflict(sourceID uuid.UUID, messageID string) error {
	return fmt.Errorf("source %s: message id %q received before with another payload: %w", sourceID, messageID, ErrMessageConflict)
}

// readLimited reads the whole body when it fits in limit bytes.
func readLimited(r io.Reader, declared, limit int64) ([]byte, error) {
	if declared > limit {
		return nil, ErrBodyTooLarge
	}
	if r == nil {
		return []byte{}, nil
	}
	var buf bytes.Buffer
	if declared > 0 {
		buf.Grow(int(declared))
	}
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		// The adapter reports a body over its own limit as ErrBodyTooLarge.
		if errors.Is(err, ErrBodyTooLarge) {
			return nil, ErrBodyTooLarge
		}
		return nil, ErrBodyUnreadable
	}
	if n > limit {
		return nil, ErrBodyTooLarge
	}
	return buf.Bytes(), nil
}

// replayExpiry keeps a key for as long as the verifier would still accept
// its timestamp, plus a margin; kinds without a signed timestamp get
// UntimedReplayWindow.
func replayExpiry(src Source, signedAt, now time.Time) time.Time {
	if signedAt.IsZero() {
		return now.Add(UntimedReplayWindow)
	}
	base := signedAt
	if now.After(base) {
		base = now
	}
	return base.Add(time.Duration(src.ToleranceSeconds)*time.Second + replayMargin)
}

// dropHeader reports whether a canonical header name is a credential or a
// hop-by-hop header, which handlers have no business reading and the inbox
// should not keep.
func dropHeader(name string) bool {
	switch name {
	case "Authorization", "Proxy-Authorization", "Cookie",
		"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Proxy-Connection":
		return true
	}
	return false
}

func keptHeaders(h domain.Header) domain.Header {
	out := make(domain.Header, len(h))
	for k, vs := range h {
		ck := domain.CanonicalHeaderKey(k)
		if dropHeader(ck) {
			continue
		}
		for _, v := range vs {
			out[ck] = append(out[ck], cleanText(v, 0))
		}
	}
	return out
}

// newID returns a time-ordered id (UUIDv7), so inbox inserts append to the
// primary key index instead of splitting random pages.
func newID() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.New()
	}
	return id
}
