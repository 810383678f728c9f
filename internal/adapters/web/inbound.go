package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// source is an inbound source as the contract returns it: fixed fields
// beside the kind's options.
type source struct {
	ID               uuid.UUID
	Name             string
	Verifier         string
	Enabled          bool
	RecordEvents     bool
	BodyLimitBytes   int64
	ToleranceSeconds int
	ReceiveURL       string
	SecretRotatedAt  *time.Time
	// PreviousSecretExpiresAt is when the secret before the last rotation
	// stops verifying; nil when none does.
	PreviousSecretExpiresAt *time.Time
	CreatedAt               time.Time
	// Secret is only in the answer of inbound_sources.create.
	Secret string
	// Options are the kind's options, as text.
	Options map[string]string
}

// message is an inbox message as the contract lists it.
type message struct {
	ID            uuid.UUID
	MessageID     string
	EventType     string
	State         string
	Status        string
	StatusDetail  string
	Attempts      int
	LastError     *string
	ReceivedAt    time.Time
	LastAttemptAt *time.Time
	NextAttemptAt *time.Time
	DeadAt        *time.Time
	Replays       int
	JobID         *int64
	TaskURL       *string
	// Event is the message's inbound.message.received, when the page
	// looked it up (the newest messages only) and found it.
	Event *uuid.UUID
	// Told are the deliveries of Event: the endpoints told of it.
	Told []webhook.EventDelivery
	// Looked says the page looked the message's event up.
	Looked bool
}

// Link is the message's job in River's UI, or "".
func (m message) Link() string {
	if m.TaskURL != nil && strings.HasPrefix(*m.TaskURL, "/admin/tasks") {
		return *m.TaskURL
	}
	if m.JobID != nil {
		return "/admin/tasks?job=" + strconv.FormatInt(*m.JobID, 10)
	}
	return ""
}

// sourceForm is the create form as posted.
type sourceForm struct {
	Name, Verifier, Secret, Tolerance, BodyLimit string
	// The hmac kind's options.
	SignatureHeader, SignaturePrefix, Encoding, Payload      string
	TimestampHeader, TimestampFormat, IDHeader, EventTypeHdr string
	Enabled, RecordEvents                                    bool
}

type kindInfo struct {
	Name, Label, Help string
	Generates         bool
}

// kinds are the verifier kinds the form offers.
func kinds() []kindInfo {
	return []kindInfo{
		{verifier.KindStandardWebhooks, "Standard Webhooks", "webhook-id / webhook-timestamp / webhook-signature headers; the instance generates the secret.", true},
		{verifier.KindGitHub, "GitHub", "X-Hub-Signature-256; paste the secret you set in GitHub.", false},
		{verifier.KindStripe, "Stripe", "Stripe-Signature; paste the endpoint's signing secret (whsec_…).", false},
		{verifier.KindHMAC, "Generic HMAC-SHA256", "Any provider signing with HMAC-SHA256; paste its secret and describe its headers below.", false},
	}
}

type sourceNewData struct {
	Form  sourceForm
	Kinds []kindInfo
	CSRF  string
}

type sourceListData struct {
	Sources []source
	Next    string
}

type sourceShowData struct {
	// Charts are the source's health chart; nil without its op.
	Charts *healthCharts
	// Signing tells the sender how to sign for the source's kind.
	Signing signingHelp
	// Events is what the source's events reach; nil when this server
	// declares no webhook ops.
	Events      *sourceEvents
	Source      source
	ReceiveURL  string
	Messages    []message
	DeadLetters []message
	MoreMsgs    string
	CSRF        string
	Refresh     bool
	// Connections are the supplier connections fed by this source: what
	// processing does with its messages.
	Connections []connection
	// Processing is false when this server declares no supplier ops.
	Processing bool
	// Refusals are the requests the source refused recently.
	Refusals []inbound.RefusalView
	// HasRefusals is false when this server declares no refusals op.
	HasRefusals bool
}

func (h *Handler) inboundList(c echo.Context, s *Session) error {
	if h.inbound == nil {
		return h.fail(c, s, notDeclared("inbound_sources.list"))
	}
	p, err := h.inbound.list.Call(c.Request().Context(), s.Caller, op.PageInput{Limit: 50, Cursor: c.QueryParam("cursor")})
	if err != nil {
		return h.fail(c, s, err)
	}
	d := sourceListData{}
	for _, v := range p.Data {
		d.Sources = append(d.Sources, sourceOf(v))
	}
	if p.NextCursor != nil {
		d.Next = "/admin/inbound?cursor=" + url.QueryEscape(*p.NextCursor)
	}
	return h.render(c, http.StatusOK, "inbound", view{Title: "Inbound sources", Section: "inbound", Session: s, Notice: notice(c), Data: d})
}

func (h *Handler) inboundNew(c echo.Context, s *Session) error {
	if h.inbound == nil {
		return h.fail(c, s, notDeclared("inbound_sources.create"))
	}
	return h.render(c, http.StatusOK, "inbound_new", view{Title: "New inbound source", Section: "inbound", Session: s,
		Data: sourceNewData{Form: sourceForm{Verifier: verifier.KindStandardWebhooks, Enabled: true, RecordEvents: true}, Kinds: kinds(), CSRF: s.CSRFToken}})
}

func (h *Handler) inboundCreate(c echo.Context, s *Session) error {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	f := sourceForm{
		Name: v("name"), Verifier: v("verifier"), Secret: v("secret"), Tolerance: v("tolerance_seconds"), BodyLimit: v("body_limit_bytes"),
		SignatureHeader: v("signature_header"), SignaturePrefix: v("signature_prefix"), Encoding: v("encoding"), Payload: v("payload"),
		TimestampHeader: v("timestamp_header"), TimestampFormat: v("timestamp_format"), IDHeader: v("id_header"), EventTypeHdr: v("event_type_header"),
		Enabled: c.FormValue("enabled") != "", RecordEvents: c.FormValue("record_events") != "",
	}
	again := func(err error) error {
		status, detail := h.describe(c, err)
		return h.render(c, status, "inbound_new", view{Title: "New inbound source", Section: "inbound", Session: s, Error: detail,
			Data: sourceNewData{Form: f, Kinds: kinds(), CSRF: s.CSRFToken}})
	}
	if h.inbound == nil {
		return h.fail(c, s, notDeclared("inbound_sources.create"))
	}
	in := inbound.CreateSourceInput{Name: f.Name, Verifier: f.Verifier, Enabled: &f.Enabled, RecordEvents: &f.RecordEvents, Secret: f.Secret}
	if err := parseNumbers(
		numberField{"tolerance_seconds", f.Tolerance, func(n int64) { in.ToleranceSeconds = int(n) }},
		numberField{"body_limit_bytes", f.BodyLimit, func(n int64) { in.BodyLimitBytes = n }},
	); err != nil {
		return again(err)
	}
	if f.Verifier == verifier.KindHMAC {
		opts := map[string]string{}
		for k, val := range map[string]string{
			"signature_header": f.SignatureHeader, "signature_prefix": f.SignaturePrefix, "encoding": f.Encoding, "payload": f.Payload,
			"timestamp_header": f.TimestampHeader, "timestamp_format": f.TimestampFormat, "id_header": f.IDHeader, "event_type_header": f.EventTypeHdr,
		} {
			if val != "" {
				opts[k] = val
			}
		}
		o, err := optionsJSON(opts, false)
		if err != nil {
			return again(err)
		}
		in.Options = o
	}
	res, err := h.inbound.create.Call(c.Request().Context(), s.Caller, in)
	if err != nil {
		return again(err)
	}
	created := sourceOf(res.SourceView)
	created.Secret = res.Secret
	// As for endpoints, the generated secret is in this answer only.
	return h.render(c, http.StatusCreated, "secret", view{Title: "Source created", Section: "inbound", Session: s, Data: secretData{
		Kind: "source", Name: created.Name, Secret: created.Secret, Continue: "/admin/inbound/" + created.ID.String(),
		ReceiveURL: absoluteURL(c.Request(), created.ReceiveURL), Created: true,
	}})
}

// absoluteURL turns a path of this server into the URL a sender posts to.
func absoluteURL(r *http.Request, p string) string {
	if p == "" {
		return ""
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host + p
}

func (h *Handler) getSource(c echo.Context, s *Session, id uuid.UUID) (source, error) {
	if h.inbound == nil {
		return source{}, notDeclared("inbound_sources.get")
	}
	v, err := h.inbound.get.Call(c.Request().Context(), s.Caller, inbound.SourceIDInput{ID: id})
	if err != nil {
		return source{}, err
	}
	return sourceOf(v), nil
}

func (h *Handler) inboundShow(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	src, err := h.getSource(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	ctx := c.Request().Context()
	msgs, err := h.inbound.messages.Call(ctx, s.Caller, inbound.ListMessagesInput{ID: id, PageInput: op.PageInput{Limit: 50, Cursor: c.QueryParam("cursor")}})
	if err != nil {
		return h.fail(c, s, err)
	}
	dead, err := h.inbound.deadLetters.Call(ctx, s.Caller, inbound.ListDeadLettersInput{ID: id, PageInput: op.PageInput{Limit: 50}})
	if err != nil {
		return h.fail(c, s, err)
	}
	d := sourceShowData{Source: src, ReceiveURL: absoluteURL(c.Request(), src.ReceiveURL), Messages: messagesOf(msgs.Data),
		DeadLetters: messagesOf(dead.Data), CSRF: s.CSRFToken}
	d.Signing = signingOf(src, d.ReceiveURL)
	if err := h.sourceProcessing(c, s, &d); err != nil {
		return h.fail(c, s, err)
	}
	if err := h.sourceEventsOf(c, s, &d); err != nil {
		return h.fail(c, s, err)
	}
	for _, m := range d.Messages {
		if m.State == "received" || m.State == "processing" {
			d.Refresh = true
		}
	}
	if msgs.NextCursor != nil {
		d.MoreMsgs = "/admin/inbound/" + id.String() + "?cursor=" + url.QueryEscape(*msgs.NextCursor)
	}
	if d.Charts, err = h.sourceCharts(c, s, id); err != nil {
		return h.fail(c, s, err)
	}
	return h.render(c, http.StatusOK, "inbound_source", view{Title: src.Name, Section: "inbound", Session: s, Notice: notice(c), Data: d})
}

// sourceEnabled sets whether the source takes messages.
func (h *Handler) sourceEnabled(c echo.Context, s *Session, enabled bool, noticeKey string) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.inbound == nil {
		return h.fail(c, s, notDeclared("inbound_sources.update"))
	}
	if _, err := h.inbound.update.Call(c.Request().Context(), s.Caller, inbound.UpdateSourceInput{ID: id, Enabled: &enabled}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/inbound/"+id.String()+"?notice="+noticeKey)
}

func (h *Handler) inboundEnable(c echo.Context, s *Session) error {
	return h.sourceEnabled(c, s, true, "source_enabled")
}

func (h *Handler) inboundDisable(c echo.Context, s *Session) error {
	return h.sourceEnabled(c, s, false, "source_disabled")
}

// deadLetterReplay replays one dead letter of the source.
func (h *Handler) deadLetterReplay(c echo.Context, s *Session) error {
	srcID, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	msgID, err := uuid.Parse(c.Param("message_id"))
	if err != nil {
		return h.fail(c, s, domain.ErrNotFound)
	}
	if h.inbound == nil {
		return h.fail(c, s, notDeclared("inbound_sources.replay_dead_letter"))
	}
	if _, err := h.inbound.replayDeadLetter.Call(c.Request().Context(), s.Caller, inbound.ReplayDeadLetterInput{ID: srcID, MessageID: msgID}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/inbound/"+srcID.String()+"?notice=replayed")
}

// numberField is an optional whole-number form field and where its value
// goes.
type numberField struct {
	field, raw string
	set        func(int64)
}

// parseNumbers sets each field given a value; one that is not a whole
// number is a validation error naming it, and nothing after it is set.
func parseNumbers(fields ...numberField) error {
	for _, n := range fields {
		if n.raw == "" {
			continue
		}
		v, err := strconv.ParseInt(n.raw, 10, 64)
		if err != nil {
			return domain.Validation("INVALID_NUMBER", n.field+" must be a whole number").WithField(n.field)
		}
		n.set(v)
	}
	return nil
}
