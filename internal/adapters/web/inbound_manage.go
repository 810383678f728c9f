package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// Grace is when the previous secret stops verifying, while that is ahead.
func (s source) Grace() *time.Time {
	if s.PreviousSecretExpiresAt == nil || !s.PreviousSecretExpiresAt.After(time.Now()) {
		return nil
	}
	return s.PreviousSecretExpiresAt
}

// sourceProcessing fills in the supplier connections fed by the source and
// its recent refusals.
func (h *Handler) sourceProcessing(c echo.Context, s *Session, d *sourceShowData) error {
	if h.inbound != nil && h.inbound.refusals != nil {
		d.HasRefusals = true
		l, err := h.inbound.refusals.Call(c.Request().Context(), s.Caller, inbound.SourceIDInput{ID: d.Source.ID})
		if err != nil {
			return err
		}
		d.Refusals = l.Data
	}
	if h.suppliers == nil {
		return nil
	}
	d.Processing = true
	conns, err := h.listConnections(c, s)
	if err != nil {
		return err
	}
	for _, conn := range conns {
		if conn.SourceID == d.Source.ID {
			d.Connections = append(d.Connections, conn)
		}
	}
	return nil
}

type sourceEditData struct {
	Source                     source
	Name, BodyLimit, Tolerance string
	RecordEvents               bool
	// Options are the option fields as shown or posted (hmac kind).
	Options map[string]string
	CSRF    string
}

// hmacOptions are the option fields the edit form offers for the generic
// HMAC kind (the other kinds have none to edit).
var hmacOptions = []string{"signature_header", "signature_prefix", "encoding", "payload", "timestamp_header", "timestamp_format", "id_header", "event_type_header"}

func (h *Handler) inboundEdit(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	src, err := h.getSource(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	return h.render(c, http.StatusOK, "inbound_edit", view{Title: "Edit " + src.Name, Section: "inbound", Session: s, Data: sourceEditData{
		Source: src, Name: src.Name, BodyLimit: strconv.FormatInt(src.BodyLimitBytes, 10), Tolerance: strconv.Itoa(src.ToleranceSeconds),
		RecordEvents: src.RecordEvents, Options: src.Options, CSRF: s.CSRFToken,
	}})
}

func (h *Handler) inboundUpdate(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	src, err := h.getSource(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	d := sourceEditData{Source: src, Name: strings.TrimSpace(c.FormValue("name")), BodyLimit: strings.TrimSpace(c.FormValue("body_limit_bytes")),
		Tolerance: strings.TrimSpace(c.FormValue("tolerance_seconds")), RecordEvents: c.FormValue("record_events") != "", CSRF: s.CSRFToken}
	again := func(err error) error {
		status, detail := h.describe(c, err)
		return h.render(c, status, "inbound_edit", view{Title: "Edit " + src.Name, Section: "inbound", Session: s, Error: detail, Data: d})
	}
	in := inbound.UpdateSourceInput{ID: id, Name: &d.Name, RecordEvents: &d.RecordEvents}
	if err := parseNumbers(
		numberField{"tolerance_seconds", d.Tolerance, func(n int64) { t := int(n); in.ToleranceSeconds = &t }},
		numberField{"body_limit_bytes", d.BodyLimit, func(n int64) { in.BodyLimitBytes = &n }},
	); err != nil {
		return again(err)
	}
	if src.Verifier == verifier.KindHMAC {
		// Changed options are sent; one emptied is sent as null, which
		// restores its default.
		d.Options = map[string]string{}
		changed := map[string]string{}
		for _, k := range hmacOptions {
			val := strings.TrimSpace(c.FormValue(k))
			d.Options[k] = val
			switch prev := src.Options[k]; {
			case val != "" && val != prev:
				changed[k] = val
			case val == "" && prev != "":
				changed[k] = ""
			}
		}
		if len(changed) > 0 {
			opts, err := optionsJSON(changed, true)
			if err != nil {
				return again(err)
			}
			in.Options = opts
		}
	}
	if _, err := h.inbound.update.Call(c.Request().Context(), s.Caller, in); err != nil {
		return again(err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/inbound/"+id.String()+"?notice=source_saved")
}

// inboundDelete deletes a source and its inbox after a confirmation step.
func (h *Handler) inboundDelete(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if !confirmed(c) {
		src, err := h.getSource(c, s, id)
		if err != nil {
			return h.fail(c, s, err)
		}
		return h.confirm(c, s, "inbound", confirmData{
			Heading: "Delete inbound source?", Action: "/admin/inbound/" + id.String() + "/delete", Button: "Delete source", Back: "/admin/inbound/" + id.String(), Danger: true,
			Lines: []string{
				"The source \u201c" + src.Name + "\u201d is deleted with its whole inbox: every message, dead letters included, is gone and cannot be replayed.",
				"Its secret is destroyed and its receive URL answers 404 from then on; a sender still posting there gets 404. Supplier connections on this source go with it.",
			},
		})
	}
	if h.inbound == nil {
		return h.fail(c, s, notDeclared("inbound_sources.delete"))
	}
	if _, err := h.inbound.delete.Call(c.Request().Context(), s.Caller, inbound.SourceIDInput{ID: id}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/inbound?notice=source_deleted")
}

// inboundRotate replaces a source's secret after a confirmation step that
// says what happens to the old one.
func (h *Handler) inboundRotate(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	src, err := h.getSource(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	generates := src.Verifier == verifier.KindStandardWebhooks
	if !confirmed(c) {
		d := confirmData{
			Heading: "Rotate the secret of " + src.Name + "?", Action: "/admin/inbound/" + id.String() + "/rotate", Button: "Rotate secret", Back: "/admin/inbound/" + id.String(),
			Secret: !generates, Danger: true,
			Lines: []string{"The current secret keeps verifying for " + hours(inbound.SecretGrace) + " after the rotation (until about " +
				time.Now().Add(inbound.SecretGrace).UTC().Format("2006-01-02 15:04 UTC") + "), beside the new one, so the sender can switch without losing messages; then it is dropped.",
				"A previous secret still in its grace from an earlier rotation is dropped at once."},
		}
		if generates {
			d.Lines = append(d.Lines, "A new secret is generated and shown once; give it to the sender right away.")
		} else {
			d.Lines = append(d.Lines, "Change the secret at the provider first, then enter the provider's new secret here.")
		}
		return h.confirm(c, s, "inbound", d)
	}
	res, err := h.inbound.rotate.Call(c.Request().Context(), s.Caller, inbound.RotateSecretInput{ID: id, Secret: strings.TrimSpace(c.FormValue("secret"))})
	if err != nil {
		return h.fail(c, s, err)
	}
	d := rotatedData{Name: src.Name, Continue: "/admin/inbound/" + id.String(), Source: true}
	if res.Secret != nil {
		d.Secret = *res.Secret
	}
	d.GraceUntil = res.PreviousSecretExpiresAt
	return h.render(c, http.StatusOK, "webhook_rotated", view{Title: "New source secret", Section: "inbound", Session: s, Data: d})
}

// deadLettersReplay replays every dead letter of the source.
func (h *Handler) deadLettersReplay(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.inbound == nil {
		return h.fail(c, s, notDeclared("inbound_sources.replay_dead_letters"))
	}
	if !confirmed(c) {
		src, err := h.getSource(c, s, id)
		if err != nil {
			return h.fail(c, s, err)
		}
		page := "/admin/inbound/" + id.String()
		return h.confirm(c, s, "inbound", confirmData{
			Heading: "Replay every dead letter of " + src.Name + "?", Action: page + "/dead-letters/replay", Button: "Replay them all", Back: page,
			Lines: []string{"Each dead letter is processed again from its first attempt, as it was received: a handler that still fails makes it a dead letter again."},
		})
	}
	res, err := h.inbound.replayDeadLetters.Call(c.Request().Context(), s.Caller, inbound.ReplayDeadLettersInput{ID: id})
	if err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/inbound/"+id.String()+"?notice=replayed_all&count="+strconv.Itoa(res.Count))
}

// messageDetail is inbound_sources.message's answer as the page shows it.
type messageDetail struct {
	message
	SignedAt     *time.Time
	DoneAt       *time.Time
	Headers      map[string][]string
	Body         string
	BodyEncoding string
	PayloadSHA   string
}

type headerLine struct{ Name, Value string }

type messageData struct {
	Source  source
	Message messageDetail
	Headers []headerLine
	// Body is the body as text (indented when it is JSON); Binary when it
	// is not text and is shown as base64.
	Body   string
	Binary bool
	CSRF   string
}

func (h *Handler) inboundMessage(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	msgID, err := uuid.Parse(c.Param("message_id"))
	if err != nil {
		return h.fail(c, s, domain.ErrNotFound)
	}
	src, err := h.getSource(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	v, err := h.inbound.message.Call(c.Request().Context(), s.Caller, inbound.MessageInput{ID: id, MessageID: msgID})
	if err != nil {
		return h.fail(c, s, err)
	}
	m := messageDetail{message: messageOf(v.MessageView), SignedAt: v.SignedAt, DoneAt: v.DoneAt, Headers: v.Headers,
		Body: v.Body, BodyEncoding: v.BodyEncoding, PayloadSHA: v.PayloadSHA}
	d := messageData{Source: src, Message: m, CSRF: s.CSRFToken}
	for name, values := range m.Headers {
		for _, v := range values {
			d.Headers = append(d.Headers, headerLine{name, v})
		}
	}
	sort.Slice(d.Headers, func(i, j int) bool { return d.Headers[i].Name < d.Headers[j].Name })
	d.Body, d.Binary = bodyText(m.Body, m.BodyEncoding)
	return h.render(c, http.StatusOK, "inbound_message", view{Title: "Message " + m.MessageID, Section: "inbound", Session: s, Notice: notice(c), Data: d})
}

// bodyText returns the body to show: JSON indented, other text as is; a
// body that is not UTF-8 comes as base64 and is shown so.
func bodyText(body, encoding string) (string, bool) {
	if encoding == "base64" {
		return body, true
	}
	var out bytes.Buffer
	if json.Indent(&out, []byte(body), "", "  ") == nil {
		return out.String(), false
	}
	return body, false
}
