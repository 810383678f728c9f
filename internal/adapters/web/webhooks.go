package web

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
)

// endpoint is a webhook endpoint as the contract returns it.
type endpoint struct {
	ID             uuid.UUID         `json:"id"`
	URL            string            `json:"url"`
	Description    string            `json:"description"`
	EventTypes     []string          `json:"event_types"`
	EmbedID        *uuid.UUID        `json:"embed_id"`
	Headers        map[string]string `json:"headers"`
	Enabled        bool              `json:"enabled"`
	DisabledReason *string           `json:"disabled_reason"`
	FailingSince   *time.Time        `json:"failing_since"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
	// Secret is only in the answer of webhooks.create.
	Secret string `json:"secret"`
}

// State is "disabled", "failing" or "enabled".
func (e endpoint) State() string {
	switch {
	case !e.Enabled:
		return "disabled"
	case e.FailingSince != nil:
		return "failing"
	default:
		return "enabled"
	}
}

// HeaderNames lists the custom header names, sorted (values may be
// credentials and are not shown).
func (e endpoint) HeaderNames() []string {
	names := make([]string, 0, len(e.Headers))
	for k := range e.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// delivery is a row of webhooks.deliveries.
type delivery struct {
	JobID       int64      `json:"job_id"`
	EventID     string     `json:"event_id"`
	EventType   string     `json:"event_type"`
	State       string     `json:"state"`
	Attempt     int        `json:"attempt"`
	MaxAttempts int        `json:"max_attempts"`
	StatusCode  *int       `json:"status_code"`
	LastError   *string    `json:"last_error"`
	AttemptedAt *time.Time `json:"attempted_at"`
	CreatedAt   time.Time  `json:"created_at"`
	TaskURL     string     `json:"task_url"`
}

// Link is the delivery's page in River's UI.
func (d delivery) Link() string {
	if strings.HasPrefix(d.TaskURL, "/admin/tasks") {
		return d.TaskURL
	}
	return fmt.Sprintf("/admin/tasks?job=%d", d.JobID)
}

// Final tells whether River is done with the delivery.
func (d delivery) Final() bool {
	switch d.State {
	case "completed", "discarded", "cancelled":
		return true
	}
	return false
}

type page[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"next_cursor"`
}

type eventTypeGroup struct {
	Domain string
	Types  []domain.EventType
}

// eventTypeGroups groups the webhook event types by the domain producing
// them, for the create form's checkboxes.
func eventTypeGroups() []eventTypeGroup {
	byDomain := map[string][]domain.EventType{}
	for _, t := range domain.WebhookEventTypes() {
		byDomain[t.Domain] = append(byDomain[t.Domain], t)
	}
	var groups []eventTypeGroup
	for d, ts := range byDomain {
		groups = append(groups, eventTypeGroup{Domain: d, Types: ts})
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Domain < groups[j].Domain })
	return groups
}

// webhookForm is the create form as posted, kept to show it again with an
// error.
type webhookForm struct {
	URL         string
	Description string
	EventTypes  []string
	Globs       string
	EmbedID     string
	Headers     string
	Enabled     bool
}

type webhookNewData struct {
	Form   webhookForm
	Groups []eventTypeGroup
	CSRF   string
}

type webhookListData struct {
	Endpoints []endpoint
	Next      string
	CSRF      string
}

type webhookShowData struct {
	Endpoint   endpoint
	Deliveries []delivery
	Next       string
	Refresh    bool
	CSRF       string
}

type secretData struct {
	// What the secret is for ("endpoint", "source"), its title and where
	// the page continues.
	Kind, Name, Secret, Continue string
	ReceiveURL                   string
	Created                      bool
}

func (h *Handler) webhookList(c echo.Context, s *Session) error {
	var p page[endpoint]
	args := map[string]any{"limit": 50}
	if cur := c.QueryParam("cursor"); cur != "" {
		args["cursor"] = cur
	}
	if err := h.call(c.Request().Context(), s, "webhooks.list", args, &p); err != nil {
		return h.fail(c, s, err)
	}
	d := webhookListData{Endpoints: p.Data, CSRF: s.CSRFToken}
	if p.NextCursor != nil {
		d.Next = "/admin/webhooks?cursor=" + url.QueryEscape(*p.NextCursor)
	}
	return h.render(c, http.StatusOK, "webhooks", view{Title: "Webhooks", Section: "webhooks", Session: s, Notice: notice(c), Data: d})
}

func (h *Handler) webhookNew(c echo.Context, s *Session) error {
	if !h.has("webhooks.create") {
		return h.fail(c, s, notDeclared("webhooks.create"))
	}
	return h.render(c, http.StatusOK, "webhook_new", view{Title: "New webhook endpoint", Section: "webhooks", Session: s,
		Data: webhookNewData{Form: webhookForm{Enabled: true}, Groups: eventTypeGroups(), CSRF: s.CSRFToken}})
}

func (h *Handler) webhookCreate(c echo.Context, s *Session) error {
	f := webhookForm{
		URL:         strings.TrimSpace(c.FormValue("url")),
		Description: strings.TrimSpace(c.FormValue("description")),
		Globs:       c.FormValue("globs"),
		EmbedID:     strings.TrimSpace(c.FormValue("embed_id")),
		Headers:     c.FormValue("headers"),
		Enabled:     c.FormValue("enabled") != "",
	}
	if params, err := c.FormParams(); err == nil {
		f.EventTypes = params["event_types"]
	}
	again := func(err error) error {
		status, detail := h.describe(c, err)
		return h.render(c, status, "webhook_new", view{Title: "New webhook endpoint", Section: "webhooks", Session: s, Error: detail,
			Data: webhookNewData{Form: f, Groups: eventTypeGroups(), CSRF: s.CSRFToken}})
	}
	types := append([]string(nil), f.EventTypes...)
	types = append(types, splitList(f.Globs)...)
	headers, err := parseHeaders(f.Headers)
	if err != nil {
		return again(err)
	}
	args := map[string]any{"url": f.URL, "description": f.Description, "event_types": types, "enabled": f.Enabled}
	if len(headers) > 0 {
		args["headers"] = headers
	}
	if f.EmbedID != "" {
		id, err := uuid.Parse(f.EmbedID)
		if err != nil {
			return again(domain.Validation("INVALID_EMBED_ID", "the embed id is not a valid id").WithField("embed_id"))
		}
		args["embed_id"] = id
	}
	var created endpoint
	if err := h.call(c.Request().Context(), s, "webhooks.create", args, &created); err != nil {
		return again(err)
	}
	// The secret is in this answer only: it is neither stored in the session
	// nor passed through a redirect, so a reload (which the page's script
	// turns into a plain visit of the endpoint page) cannot show it again.
	return h.render(c, http.StatusCreated, "secret", view{Title: "Endpoint created", Section: "webhooks", Session: s, Data: secretData{
		Kind: "endpoint", Name: created.URL, Secret: created.Secret, Continue: "/admin/webhooks/" + created.ID.String(), Created: true,
	}})
}

// routeID reads the :id of the route; a malformed id names nothing.
func routeID(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, domain.ErrNotFound
	}
	return id, nil
}

// getEndpoint reads one endpoint (the contract's GET /api/admin/webhooks/{id}).
func (h *Handler) getEndpoint(c echo.Context, s *Session, id uuid.UUID) (endpoint, error) {
	var e endpoint
	err := h.call(c.Request().Context(), s, h.opAt(http.MethodGet, "/api/admin/webhooks/{id}", "webhooks.get"), map[string]any{"id": id}, &e)
	return e, err
}

// opAt names the op declared at a REST route, or def when none is: the
// contract fixes the route of some ops but not their names.
func (h *Handler) opAt(method, path, def string) string {
	for _, d := range h.ops {
		if m := d.Meta(); m.Method == method && m.Path == path {
			return m.Name
		}
	}
	return def
}

func (h *Handler) webhookShow(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	e, err := h.getEndpoint(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	var p page[delivery]
	args := map[string]any{"id": id, "limit": 50}
	if cur := c.QueryParam("cursor"); cur != "" {
		args["cursor"] = cur
	}
	if err := h.call(c.Request().Context(), s, "webhooks.deliveries", args, &p); err != nil {
		return h.fail(c, s, err)
	}
	// The log refreshes itself while a delivery is in flight, or while the
	// test just sent has not shown up yet.
	d := webhookShowData{Endpoint: e, Deliveries: p.Data, CSRF: s.CSRFToken}
	testJob, waiting := int64(-1), false
	if c.QueryParam("notice") == "test_sent" {
		if n, err := strconv.ParseInt(c.QueryParam("job"), 10, 64); err == nil {
			testJob, waiting = n, true
		}
	}
	for _, row := range p.Data {
		if !row.Final() {
			d.Refresh = true
		}
		if row.JobID == testJob {
			waiting = false
		}
	}
	d.Refresh = d.Refresh || waiting
	if p.NextCursor != nil {
		d.Next = "/admin/webhooks/" + id.String() + "?cursor=" + url.QueryEscape(*p.NextCursor)
	}
	return h.render(c, http.StatusOK, "webhook", view{Title: e.URL, Section: "webhooks", Session: s, Notice: notice(c), Data: d})
}

// endpointAction runs a form's op on the endpoint of the route and sends the
// browser back to the endpoint page with a notice.
func (h *Handler) endpointAction(c echo.Context, s *Session, opName string, extra map[string]any, noticeOf func(result map[string]any) string) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	args := map[string]any{"id": id}
	for k, v := range extra {
		args[k] = v
	}
	var res map[string]any
	if err := h.call(c.Request().Context(), s, opName, args, &res); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/webhooks/"+id.String()+"?"+noticeOf(res))
}

func (h *Handler) webhookTest(c echo.Context, s *Session) error {
	return h.endpointAction(c, s, "webhooks.send_test", nil, func(res map[string]any) string {
		return "notice=test_sent&job=" + number(res["job_id"])
	})
}

func (h *Handler) webhookRedeliver(c echo.Context, s *Session) error {
	return h.endpointAction(c, s, "webhooks.redeliver", nil, func(res map[string]any) string {
		return "notice=redelivered&count=" + number(res["count"])
	})
}

func (h *Handler) webhookEnable(c echo.Context, s *Session) error {
	return h.endpointAction(c, s, "webhooks.update", map[string]any{"enabled": true}, func(map[string]any) string { return "notice=enabled" })
}

func (h *Handler) webhookDisable(c echo.Context, s *Session) error {
	return h.endpointAction(c, s, "webhooks.update", map[string]any{"enabled": false}, func(map[string]any) string { return "notice=disabled" })
}

func (h *Handler) webhookDeleteConfirm(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	e, err := h.getEndpoint(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	return h.render(c, http.StatusOK, "webhook_delete", view{Title: "Delete endpoint", Section: "webhooks", Session: s,
		Data: webhookShowData{Endpoint: e, CSRF: s.CSRFToken}})
}

func (h *Handler) webhookDelete(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if err := h.call(c.Request().Context(), s, "webhooks.delete", map[string]any{"id": id}, nil); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/webhooks?notice=deleted")
}

// splitList splits free text on commas and white space.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t'
	})
}

// parseHeaders reads "Name: value" lines; blank lines are skipped.
func parseHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, domain.Validation("INVALID_HEADER", fmt.Sprintf("header line %d is not \"Name: value\"", i+1)).WithField("headers")
		}
		out[name] = strings.TrimSpace(value)
	}
	return out, nil
}

// number renders a JSON number from an op's result (digits only).
func number(v any) string {
	switch n := v.(type) {
	case float64:
		return strconv.FormatInt(int64(n), 10)
	case string:
		if _, err := strconv.ParseInt(n, 10, 64); err == nil {
			return n
		}
	}
	return "0"
}

// notice returns the confirmation a page shows after a redirect. Only known
// keys are shown, with numbers checked to be numbers, so a crafted link can
// put no text of its own on the page.
func notice(c echo.Context) string {
	digits := func(k string) string {
		v := c.QueryParam(k)
		if _, err := strconv.ParseUint(v, 10, 63); err != nil {
			return "?"
		}
		return v
	}
	switch c.QueryParam("notice") {
	case "test_sent":
		return "Test event queued as job " + digits("job") + ". Its delivery appears below."
	case "redelivered":
		return digits("count") + " failed deliveries queued again."
	case "enabled":
		return "Endpoint enabled; its failure state was cleared."
	case "disabled":
		return "Endpoint disabled: no deliveries are made until it is enabled again."
	case "deleted":
		return "Endpoint deleted."
	case "source_enabled":
		return "Source enabled."
	case "source_disabled":
		return "Source disabled: its receive URL answers 404 until it is enabled again."
	case "replayed":
		return "Dead letter replayed: the message is queued for processing again."
	case "released":
		return "Event released: the relay will fan it out again."
	}
	return moreNotices(c.QueryParam("notice"), digits)
}
