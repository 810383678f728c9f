package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// source is an inbound source as the contract returns it: fixed fields
// beside the kind's options.
type source struct {
	ID               uuid.UUID  `json:"id"`
	Name             string     `json:"name"`
	Verifier         string     `json:"verifier"`
	Enabled          bool       `json:"enabled"`
	BodyLimitBytes   int64      `json:"body_limit_bytes"`
	ToleranceSeconds int        `json:"tolerance_seconds"`
	ReceiveURL       string     `json:"receive_url"`
	SecretRotatedAt  *time.Time `json:"secret_rotated_at"`
	// PreviousSecretExpiresAt is when the secret before the last rotation
	// stops verifying; nil when none does.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
	CreatedAt               time.Time  `json:"created_at"`
	Secret                  string     `json:"secret"`
	// Options are the members that are not fixed fields.
	Options map[string]string `json:"-"`
}

// sourceFields are the members of a source that are not the kind's options.
var sourceFields = map[string]bool{
	"id": true, "name": true, "verifier": true, "enabled": true, "body_limit_bytes": true, "tolerance_seconds": true,
	"receive_url": true, "secret_rotated_at": true, "created_at": true, "updated_at": true, "secret": true,
	"previous_secret_expires_at": true,
}

// UnmarshalJSON reads the fixed fields and keeps the rest as options, shown
// as text.
func (s *source) UnmarshalJSON(b []byte) error {
	type plain source
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	s.Options = map[string]string{}
	for k, v := range all {
		if sourceFields[k] {
			continue
		}
		var str string
		if json.Unmarshal(v, &str) == nil {
			s.Options[k] = str
		} else {
			s.Options[k] = string(v)
		}
	}
	return nil
}

// message is an inbox message as the contract lists it.
type message struct {
	ID            uuid.UUID  `json:"id"`
	MessageID     string     `json:"message_id"`
	EventType     string     `json:"event_type"`
	State         string     `json:"state"`
	Status        string     `json:"status"`
	StatusDetail  string     `json:"status_detail"`
	Attempts      int        `json:"attempts"`
	LastError     *string    `json:"last_error"`
	ReceivedAt    time.Time  `json:"received_at"`
	LastAttemptAt *time.Time `json:"last_attempt_at"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	DeadAt        *time.Time `json:"dead_at"`
	Replays       int        `json:"replays"`
	JobID         *int64     `json:"job_id"`
	TaskURL       *string    `json:"task_url"`
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
	Enabled                                                  bool
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
	Refusals []refusal
	// HasRefusals is false when this server declares no refusals op.
	HasRefusals bool
}

func (h *Handler) inboundList(c echo.Context, s *Session) error {
	var p page[source]
	args := map[string]any{"limit": 50}
	if cur := c.QueryParam("cursor"); cur != "" {
		args["cursor"] = cur
	}
	if err := h.call(c.Request().Context(), s, "inbound_sources.list", args, &p); err != nil {
		return h.fail(c, s, err)
	}
	d := sourceListData{Sources: p.Data}
	if p.NextCursor != nil {
		d.Next = "/admin/inbound?cursor=" + url.QueryEscape(*p.NextCursor)
	}
	return h.render(c, http.StatusOK, "inbound", view{Title: "Inbound sources", Section: "inbound", Session: s, Notice: notice(c), Data: d})
}

func (h *Handler) inboundNew(c echo.Context, s *Session) error {
	if !h.has("inbound_sources.create") {
		return h.fail(c, s, notDeclared("inbound_sources.create"))
	}
	return h.render(c, http.StatusOK, "inbound_new", view{Title: "New inbound source", Section: "inbound", Session: s,
		Data: sourceNewData{Form: sourceForm{Verifier: verifier.KindStandardWebhooks, Enabled: true}, Kinds: kinds(), CSRF: s.CSRFToken}})
}

func (h *Handler) inboundCreate(c echo.Context, s *Session) error {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	f := sourceForm{
		Name: v("name"), Verifier: v("verifier"), Secret: v("secret"), Tolerance: v("tolerance_seconds"), BodyLimit: v("body_limit_bytes"),
		SignatureHeader: v("signature_header"), SignaturePrefix: v("signature_prefix"), Encoding: v("encoding"), Payload: v("payload"),
		TimestampHeader: v("timestamp_header"), TimestampFormat: v("timestamp_format"), IDHeader: v("id_header"), EventTypeHdr: v("event_type_header"),
		Enabled: c.FormValue("enabled") != "",
	}
	again := func(err error) error {
		status, detail := h.describe(c, err)
		return h.render(c, status, "inbound_new", view{Title: "New inbound source", Section: "inbound", Session: s, Error: detail,
			Data: sourceNewData{Form: f, Kinds: kinds(), CSRF: s.CSRFToken}})
	}
	args := map[string]any{"name": f.Name, "verifier": f.Verifier, "enabled": f.Enabled}
	if f.Secret != "" {
		args["secret"] = f.Secret
	}
	for field, raw := range map[string]string{"tolerance_seconds": f.Tolerance, "body_limit_bytes": f.BodyLimit} {
		if raw == "" {
			continue
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return again(domain.Validation("INVALID_NUMBER", field+" must be a whole number").WithField(field))
		}
		args[field] = n
	}
	if f.Verifier == verifier.KindHMAC {
		opts := map[string]any{}
		for k, val := range map[string]string{
			"signature_header": f.SignatureHeader, "signature_prefix": f.SignaturePrefix, "encoding": f.Encoding, "payload": f.Payload,
			"timestamp_header": f.TimestampHeader, "timestamp_format": f.TimestampFormat, "id_header": f.IDHeader, "event_type_header": f.EventTypeHdr,
		} {
			if val != "" {
				opts[k] = val
			}
		}
		args["options"] = opts
	}
	var created source
	if err := h.call(c.Request().Context(), s, "inbound_sources.create", args, &created); err != nil {
		return again(err)
	}
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
	var src source
	err := h.call(c.Request().Context(), s, "inbound_sources.get", map[string]any{"id": id}, &src)
	return src, err
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
	var msgs, dead page[message]
	args := map[string]any{"id": id, "limit": 50}
	if cur := c.QueryParam("cursor"); cur != "" {
		args["cursor"] = cur
	}
	if err := h.call(ctx, s, "inbound_sources.messages", args, &msgs); err != nil {
		return h.fail(c, s, err)
	}
	if err := h.call(ctx, s, "inbound_sources.dead_letters", map[string]any{"id": id, "limit": 50}, &dead); err != nil {
		return h.fail(c, s, err)
	}
	d := sourceShowData{Source: src, ReceiveURL: absoluteURL(c.Request(), src.ReceiveURL), Messages: msgs.Data, DeadLetters: dead.Data, CSRF: s.CSRFToken}
	if err := h.sourceProcessing(c, s, &d); err != nil {
		return h.fail(c, s, err)
	}
	for _, m := range msgs.Data {
		if m.State == "received" || m.State == "processing" {
			d.Refresh = true
		}
	}
	if msgs.NextCursor != nil {
		d.MoreMsgs = "/admin/inbound/" + id.String() + "?cursor=" + url.QueryEscape(*msgs.NextCursor)
	}
	return h.render(c, http.StatusOK, "inbound_source", view{Title: src.Name, Section: "inbound", Session: s, Notice: notice(c), Data: d})
}

func (h *Handler) sourceAction(c echo.Context, s *Session, opName string, extra map[string]any, noticeKey string) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	args := map[string]any{"id": id}
	for k, v := range extra {
		args[k] = v
	}
	if err := h.call(c.Request().Context(), s, opName, args, nil); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/inbound/"+id.String()+"?notice="+noticeKey)
}

func (h *Handler) inboundEnable(c echo.Context, s *Session) error {
	return h.sourceAction(c, s, "inbound_sources.update", map[string]any{"enabled": true}, "source_enabled")
}

func (h *Handler) inboundDisable(c echo.Context, s *Session) error {
	return h.sourceAction(c, s, "inbound_sources.update", map[string]any{"enabled": false}, "source_disabled")
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
	if err := h.call(c.Request().Context(), s, "inbound_sources.replay_dead_letter", map[string]any{"id": srcID, "message_id": msgID}, nil); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/inbound/"+srcID.String()+"?notice=replayed")
}
