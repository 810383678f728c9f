package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// endpoint is a webhook endpoint as the contract returns it.
type endpoint struct {
	ID             uuid.UUID
	URL            string
	Description    string
	EventTypes     []string
	EmbedID        *uuid.UUID
	Headers        map[string]string
	MaxInFlight    int
	TimeoutSeconds int
	MaxAttempts    int
	// RateLimitPerSecond and RateLimitBurst are the rate limit, nil
	// without one.
	RateLimitPerSecond, RateLimitBurst *int
	Enabled                            bool
	// State is "enabled", "failing", "disabled" or "deleted".
	State          string
	DisabledReason *string
	FailingSince   *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// CreatedBy and UpdatedBy say who created the endpoint and who last
	// changed it, in words (actorText).
	CreatedBy, UpdatedBy string
	DeletedAt            *time.Time
	Health               *health
	// RotationGraceUntil is when the previous secret stops signing.
	RotationGraceUntil *time.Time
	// Secret is only in the answer of webhooks.create.
	Secret string
	// Signing is hmac-sha256 or ed25519; PublicKey and PreviousPublicKey
	// are an ed25519 endpoint's keys (the previous one during a rotation).
	Signing           string
	PublicKey         *string
	PreviousPublicKey *string
	// Filter is the payload filter as JSON text, "" without one.
	Filter string
}

// Ed25519 reports whether the endpoint signs v1a with an ed25519 key.
func (e endpoint) Ed25519() bool { return e.Signing == webhook.SigningEd25519 }

// health is an endpoint's recent outcomes as webhooks.list returns them.
type health struct {
	LastSuccessAt  *time.Time
	LastFailureAt  *time.Time
	LastFailure    *string
	Attempts24h    int
	Succeeded24h   int
	SuccessRate24h *float64
}

// Rate renders the day's success rate with its attempt count, "—"
// without attempts.
func (h *health) Rate() string {
	if h == nil || h.SuccessRate24h == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f%% of %d", *h.SuccessRate24h*100, h.Attempts24h)
}

// Deleted tells whether the endpoint is deleted (read-only).
func (e endpoint) Deleted() bool { return e.State == "deleted" }

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
	JobID       int64
	EventID     string
	EventType   string
	State       string
	Status      string
	WaitingFor  string
	Attempt     int
	MaxAttempts int
	Summary     string
	StatusCode  *int
	LatencyMS   *int
	Response    *string
	LastError   *string
	AttemptedAt *time.Time
	CreatedAt   time.Time
	ScheduledAt time.Time
	TaskURL     string
}

// deliveryOf is the page's view of a delivery.
func deliveryOf(d webhook.Delivery) delivery {
	return delivery{JobID: d.JobID, EventID: d.EventID.String(), EventType: d.EventType, State: d.State, Status: d.Status,
		WaitingFor: d.WaitingFor, Attempt: d.Attempt, MaxAttempts: d.MaxAttempts, Summary: d.Summary, StatusCode: d.StatusCode, LatencyMS: d.LatencyMS,
		Response: d.Response, LastError: d.LastError, AttemptedAt: d.AttemptedAt, CreatedAt: d.CreatedAt, ScheduledAt: d.ScheduledAt,
		TaskURL: d.TaskURL}
}

// StatusLabel is the owner's name of the delivery's state, with why a
// waiting one waits.
func (d delivery) StatusLabel() string {
	switch {
	case d.Status == "waiting" && d.WaitingFor == "schedule":
		return "waiting (endpoint cooldown or Retry-After)"
	case d.Status == "waiting":
		return "waiting (in queue)"
	case d.Status == "cancelled":
		return "cancelled (4xx, 410 or not deliverable)"
	case d.Status == "failed" && d.Summary != "":
		return d.Summary
	case d.Status == "":
		return d.State
	}
	return d.Status
}

// Next is when a waiting or retrying delivery runs next, nil otherwise.
func (d delivery) Next() *time.Time {
	switch d.State {
	case "scheduled", "retryable", "available":
		t := d.ScheduledAt
		return &t
	}
	return nil
}

// CanRetryNow and CanSendAgain say which steering a delivery takes.
func (d delivery) CanRetryNow() bool {
	return d.State == "retryable" || d.State == "scheduled" || d.State == "pending"
}

// CanSendAgain tells whether the delivery is finished (send again).
func (d delivery) CanSendAgain() bool { return d.Final() }

// Path is the delivery's page under endpoint id.
func (d delivery) Path(id uuid.UUID) string {
	return fmt.Sprintf("/admin/webhooks/%s/deliveries/%d", id, d.JobID)
}

// deliveryDetail is webhooks.delivery's answer.
type deliveryDetail struct {
	delivery
	Attempts []deliveryAttempt
	Request  *webhook.SentRequest
}

// HeaderLines are the sent headers sorted by name.
func (d deliveryDetail) HeaderLines() []string {
	if d.Request == nil {
		return nil
	}
	var out []string
	for k, v := range d.Request.Headers {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
}

type deliveryAttempt struct {
	Attempt    int
	Outcome    string
	StatusCode *int
	LatencyMS  *int
	Response   *string
	Error      *string
	Location   *string
	At         time.Time
	// Headers are the headers the attempt sent, with its own timestamp
	// and signature; nil when not recorded.
	Headers map[string]string
}

// OutcomeLabel is the attempt's outcome in an owner's words.
func (a deliveryAttempt) OutcomeLabel() string { return webhook.AttemptOutcomeText(a.Outcome) }

// HeaderLines are the headers the attempt sent, sorted by name.
func (a deliveryAttempt) HeaderLines() []string {
	var out []string
	for k, v := range a.Headers {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
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
	// The delivery settings, as typed (empty: the default).
	MaxInFlight, TimeoutSeconds, MaxAttempts string
	// RateLimit and RateBurst are the rate limit as typed (empty: none).
	RateLimit, RateBurst string
	// ClearHeaders (edit only) removes every custom header.
	ClearHeaders bool
	// Signing (create only) and Filter (JSON text; empty: none) are the
	// endpoint's controls.
	Signing, Filter string
}

// settings reads the delivery settings typed in f into the op's fields
// (nil: not typed, the default or the value as it is); a value that is not
// a whole number is refused with the field's code.
func (f webhookForm) settings(maxInFlight, timeoutSeconds, maxAttempts, rate, burst **int) error {
	for _, s := range []struct {
		field, value, code string
		dst                **int
	}{
		{"max_in_flight", f.MaxInFlight, "INVALID_MAX_IN_FLIGHT", maxInFlight},
		{"timeout_seconds", f.TimeoutSeconds, "INVALID_TIMEOUT", timeoutSeconds},
		{"max_attempts", f.MaxAttempts, "INVALID_MAX_ATTEMPTS", maxAttempts},
		{"rate_limit_per_second", f.RateLimit, "INVALID_RATE_LIMIT", rate},
		{"rate_limit_burst", f.RateBurst, "INVALID_RATE_LIMIT", burst},
	} {
		if s.value == "" {
			continue
		}
		n, err := strconv.Atoi(s.value)
		if err != nil {
			return domain.Validation(s.code, s.field+" must be a whole number").WithField(s.field)
		}
		*s.dst = &n
	}
	return nil
}

// readWebhookForm reads the create and edit forms.
func readWebhookForm(c echo.Context) webhookForm {
	f := webhookForm{
		URL:            strings.TrimSpace(c.FormValue("url")),
		Description:    strings.TrimSpace(c.FormValue("description")),
		Globs:          c.FormValue("globs"),
		EmbedID:        strings.TrimSpace(c.FormValue("embed_id")),
		Headers:        c.FormValue("headers"),
		Enabled:        c.FormValue("enabled") != "",
		MaxInFlight:    strings.TrimSpace(c.FormValue("max_in_flight")),
		TimeoutSeconds: strings.TrimSpace(c.FormValue("timeout_seconds")),
		MaxAttempts:    strings.TrimSpace(c.FormValue("max_attempts")),
		RateLimit:      strings.TrimSpace(c.FormValue("rate_limit_per_second")),
		RateBurst:      strings.TrimSpace(c.FormValue("rate_limit_burst")),
		ClearHeaders:   c.FormValue("clear_headers") != "",
		Signing:        strings.TrimSpace(c.FormValue("signing")),
		Filter:         strings.TrimSpace(c.FormValue("filter")),
	}
	if params, err := c.FormParams(); err == nil {
		f.EventTypes = params["event_types"]
	}
	return f
}

type webhookNewData struct {
	Form   webhookForm
	Groups []eventTypeGroup
	CSRF   string
	// Embeds are the scopes the form offers beside standalone; nil when
	// this server has no access pages (the embed id is typed then).
	Embeds []access.EmbedView
}

type webhookListData struct {
	Endpoints []endpoint
	Next      string
	CSRF      string
	// Filter is the list's filters and order as asked (kept in the next
	// page's link); Types are the event types to filter by.
	Filter webhookFilter
	Types  []domain.EventType
}

// webhookFilter is the endpoint list's query: the webhooks.list filters.
type webhookFilter struct {
	State, EventType, URL, Sort string
}

// Query is the filter as a URL query (with a trailing '&' when not empty).
func (f webhookFilter) Query() string {
	q := url.Values{}
	for k, v := range map[string]string{"state": f.State, "event_type": f.EventType, "url": f.URL, "sort": f.Sort} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return ""
	}
	return q.Encode() + "&"
}

// SortLink is the list's link sorted by key, reversed when it is already
// sorted by key ascending (the list's default is -created, newest first).
func (f webhookFilter) SortLink(key string) string {
	g := f
	g.Sort = key
	if f.Sort == key {
		g.Sort = "-" + key
	}
	return "/admin/webhooks?" + strings.TrimSuffix(g.Query(), "&")
}

type webhookShowData struct {
	Endpoint endpoint
	// Charts are the endpoint's health charts; nil without their op.
	Charts     *healthCharts
	Deliveries []delivery
	Next       string
	Newer      string
	Refresh    bool
	CSRF       string
	Filter     deliveryFilter
	Statuses   []string
	Types      []domain.EventType
	// Steer says whether the per-delivery buttons are offered.
	Steer bool
}

// deliveryFilter is the delivery log's filter as the page's query has it.
type deliveryFilter struct {
	State, EventType, Since, Until string
}

// Active tells whether any filter is set.
func (f deliveryFilter) Active() bool {
	return f.State != "" || f.EventType != "" || f.Since != "" || f.Until != ""
}

// Query is the filter as a query string prefix ("state=…&" or "").
func (f deliveryFilter) Query() string {
	v := url.Values{}
	for k, x := range map[string]string{"state": f.State, "event_type": f.EventType, "since": f.Since, "until": f.Until} {
		if x != "" {
			v.Set(k, x)
		}
	}
	if len(v) == 0 {
		return ""
	}
	return v.Encode() + "&"
}

// formTime turns a datetime-local value (read as UTC) into RFC 3339; other
// text is passed on for the op to judge.
func formTime(v string) string {
	v = strings.TrimSpace(v)
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return v
}

type secretData struct {
	// What the secret is for ("endpoint", "source"), its title and where
	// the page continues.
	Kind, Name, Secret, Continue string
	ReceiveURL                   string
	Created                      bool
}

func (h *Handler) webhookList(c echo.Context, s *Session) error {
	if h.webhooks == nil {
		return h.fail(c, s, notDeclared("webhooks.list"))
	}
	f := webhookFilter{State: c.QueryParam("state"), EventType: c.QueryParam("event_type"),
		URL: strings.TrimSpace(c.QueryParam("url")), Sort: c.QueryParam("sort")}
	p, err := h.webhooks.list.Call(c.Request().Context(), s.Caller, webhook.ListInput{PageInput: op.PageInput{Limit: 50, Cursor: c.QueryParam("cursor")},
		State: f.State, EventType: f.EventType, URL: f.URL, Sort: f.Sort})
	if err != nil {
		return h.fail(c, s, err)
	}
	d := webhookListData{CSRF: s.CSRFToken, Filter: f, Types: domain.WebhookEventTypes()}
	for _, v := range p.Data {
		d.Endpoints = append(d.Endpoints, endpointOf(v))
	}
	if p.NextCursor != nil {
		d.Next = "/admin/webhooks?" + f.Query() + "cursor=" + url.QueryEscape(*p.NextCursor)
	}
	return h.render(c, http.StatusOK, "webhooks", view{Title: "Webhooks", Section: "webhooks", Session: s, Notice: notice(c), Data: d})
}

// webhookNew shows the create form, with the types named by event_type
// query parameters checked (a page that offers "add an endpoint" for one
// type links here with it).
func (h *Handler) webhookNew(c echo.Context, s *Session) error {
	if h.webhooks == nil {
		return h.fail(c, s, notDeclared("webhooks.create"))
	}
	return h.render(c, http.StatusOK, "webhook_new", view{Title: "New webhook endpoint", Section: "webhooks", Session: s,
		Data: webhookNewData{Form: webhookForm{Enabled: true, EventTypes: c.QueryParams()["event_type"]}, Groups: eventTypeGroups(), CSRF: s.CSRFToken,
			Embeds: h.scopeChoices(c, s)}})
}

func (h *Handler) webhookCreate(c echo.Context, s *Session) error {
	f := readWebhookForm(c)
	again := func(err error) error {
		status, detail := h.describe(c, err)
		return h.render(c, status, "webhook_new", view{Title: "New webhook endpoint", Section: "webhooks", Session: s, Error: detail,
			Data: webhookNewData{Form: f, Groups: eventTypeGroups(), CSRF: s.CSRFToken, Embeds: h.scopeChoices(c, s)}})
	}
	types := append([]string(nil), f.EventTypes...)
	types = append(types, splitList(f.Globs)...)
	headers, err := parseHeaders(f.Headers)
	if err != nil {
		return again(err)
	}
	if h.webhooks == nil {
		return h.fail(c, s, notDeclared("webhooks.create"))
	}
	in := webhook.CreateInput{URL: f.URL, Description: f.Description, EventTypes: types, Enabled: &f.Enabled, Signing: f.Signing}
	if f.Filter != "" {
		in.Filter = json.RawMessage(f.Filter)
	}
	if len(headers) > 0 {
		in.Headers = headers
	}
	if err := f.settings(&in.MaxInFlight, &in.TimeoutSeconds, &in.MaxAttempts, &in.RateLimitPerSecond, &in.RateLimitBurst); err != nil {
		return again(err)
	}
	if f.EmbedID != "" {
		id, err := uuid.Parse(f.EmbedID)
		if err != nil {
			return again(domain.Validation("INVALID_EMBED_ID", "the embed id is not a valid id").WithField("embed_id"))
		}
		in.EmbedID = &id
	}
	created, err := h.webhooks.create.Call(c.Request().Context(), s.Caller, in)
	if err != nil {
		return again(err)
	}
	if created.Secret == "" {
		// ed25519: nothing secret to show once; the page shows the public key.
		return c.Redirect(http.StatusSeeOther, "/admin/webhooks/"+created.ID.String())
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
	if h.webhooks == nil {
		return endpoint{}, notDeclared("webhooks.get")
	}
	v, err := h.webhooks.get.Call(c.Request().Context(), s.Caller, webhook.IDInput{ID: id})
	if err != nil {
		return endpoint{}, err
	}
	return endpointOf(v), nil
}

// routeEndpoint reads the endpoint the route's :id names, as the session's
// owner sees it (another owner's id is not found).
func (h *Handler) routeEndpoint(c echo.Context, s *Session) (uuid.UUID, endpoint, error) {
	id, err := routeID(c)
	if err != nil {
		return uuid.Nil, endpoint{}, err
	}
	e, err := h.getEndpoint(c, s, id)
	return id, e, err
}

func (h *Handler) webhookShow(c echo.Context, s *Session) error {
	id, e, err := h.routeEndpoint(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	f := deliveryFilter{State: c.QueryParam("state"), EventType: c.QueryParam("event_type"),
		Since: formTime(c.QueryParam("since")), Until: formTime(c.QueryParam("until"))}
	p, err := h.webhooks.deliveries.Call(c.Request().Context(), s.Caller, webhook.DeliveriesInput{ID: id,
		PageInput: op.PageInput{Limit: 50, Cursor: c.QueryParam("cursor")}, Before: c.QueryParam("before"),
		State: f.State, EventType: f.EventType, Since: f.Since, Until: f.Until})
	if err != nil {
		return h.fail(c, s, err)
	}
	// The log refreshes itself while a delivery is in flight, or while the
	// test just sent has not shown up yet.
	d := webhookShowData{Endpoint: e, CSRF: s.CSRFToken, Filter: f,
		Statuses: []string{"delivered", "sending", "waiting", "retrying", "failed", "cancelled"},
		Types:    domain.WebhookEventTypes(), Steer: h.webhooks.retry != nil && h.webhooks.resend != nil}
	for _, v := range p.Data {
		d.Deliveries = append(d.Deliveries, deliveryOf(v))
	}
	testJob, waiting := int64(-1), false
	if c.QueryParam("notice") == "test_sent" {
		if n, err := strconv.ParseInt(c.QueryParam("job"), 10, 64); err == nil {
			testJob, waiting = n, true
		}
	}
	for _, row := range d.Deliveries {
		if !row.Final() {
			d.Refresh = true
		}
		if row.JobID == testJob {
			waiting = false
		}
	}
	d.Refresh = d.Refresh || waiting
	if p.NextCursor != nil {
		d.Next = "/admin/webhooks/" + id.String() + "?" + f.Query() + "cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if p.PrevCursor != nil {
		d.Newer = "/admin/webhooks/" + id.String() + "?" + f.Query() + "before=" + url.QueryEscape(*p.PrevCursor)
	}
	// Only the newest page refreshes: an older page's rows stay put.
	d.Refresh = d.Refresh && p.PrevCursor == nil
	if d.Charts, err = h.endpointCharts(c, s, id); err != nil {
		return h.fail(c, s, err)
	}
	return h.render(c, http.StatusOK, "webhook", view{Title: e.URL, Section: "webhooks", Session: s, Notice: notice(c), Data: d})
}

// endpointAction runs a form's action on the endpoint of the route (act
// returns the notice's query) and sends the browser back to the endpoint
// page with the notice.
func (h *Handler) endpointAction(c echo.Context, s *Session, name string, act func(ctx context.Context, id uuid.UUID) (string, error)) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.webhooks == nil {
		return h.fail(c, s, notDeclared(name))
	}
	q, err := act(c.Request().Context(), id)
	if err != nil {
		return h.failOnEndpoint(c, s, id, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/webhooks/"+id.String()+"?"+q)
}

// failOnEndpoint renders an endpoint action's refusal inside the admin with
// the way forward: a disabled endpoint's with an Enable button, every one
// with the way back to the endpoint's page.
func (h *Handler) failOnEndpoint(c echo.Context, s *Session, id uuid.UUID, err error) error {
	de := domain.AsError(err)
	if de == nil || de.Kind == domain.KindInternal || de.Kind == domain.KindNotFound {
		return h.fail(c, s, err)
	}
	status, detail := h.describe(c, err)
	page := "/admin/webhooks/" + id.String()
	fw := &forward{Back: page, BackLabel: "Back to the endpoint"}
	if de.Code == webhook.CodeEndpointDisabled && h.webhooks != nil {
		fw.Text = "Enable the endpoint, then try again: while it is disabled nothing is sent to it."
		fw.Action, fw.Button, fw.CSRF = page+"/enable", "Enable endpoint", s.CSRFToken
	}
	return h.render(c, status, "error", view{Title: http.StatusText(status), Section: "webhooks", Session: s, Error: detail, Forward: fw})
}

func (h *Handler) webhookTest(c echo.Context, s *Session) error {
	return h.endpointAction(c, s, "webhooks.send_test", func(ctx context.Context, id uuid.UUID) (string, error) {
		res, err := h.webhooks.sendTest.Call(ctx, s.Caller, webhook.IDInput{ID: id})
		return "notice=test_sent&job=" + strconv.FormatInt(res.JobID, 10), err
	})
}

// confirmOnEndpoint answers an endpoint action's post without confirm=yes
// with its confirmation page, after reading the endpoint (so another
// owner's id is 404): ask fills in what to say, the action is the
// endpoint's page plus suffix, and Cancel leads back to the page.
func (h *Handler) confirmOnEndpoint(c echo.Context, s *Session, suffix string, ask func(e endpoint) confirmData) error {
	id, e, err := h.routeEndpoint(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	d := ask(e)
	page := "/admin/webhooks/" + id.String()
	d.Action, d.Back = page+suffix, page
	return h.confirm(c, s, "webhooks", d)
}

// webhookRedeliver queues every failed and cancelled delivery again after
// a confirmation step.
func (h *Handler) webhookRedeliver(c echo.Context, s *Session) error {
	if !confirmed(c) {
		return h.confirmOnEndpoint(c, s, "/redeliver", func(e endpoint) confirmData {
			return confirmData{Heading: "Redeliver every failed and cancelled delivery of " + e.URL + "?", Button: "Redeliver them",
				Lines: []string{"Each failed (River: discarded) and cancelled delivery of this endpoint is queued again, with its own webhook-id, " +
					"so the receiver may get events it saw before; one its subscription, scope or filter keeps out now is left alone."}}
		})
	}
	return h.endpointAction(c, s, "webhooks.redeliver", func(ctx context.Context, id uuid.UUID) (string, error) {
		res, err := h.webhooks.redeliver.Call(ctx, s.Caller, webhook.IDInput{ID: id})
		return "notice=redelivered&count=" + strconv.Itoa(res.Count) + "&discarded=" + strconv.Itoa(res.ByState["discarded"]) +
			"&cancelled=" + strconv.Itoa(res.ByState["cancelled"]) + "&skipped=" + strconv.Itoa(len(res.Skipped)) + skipQuery(res.Skipped), err
	})
}

// deliveryRef reads the route's endpoint id and job id.
func deliveryRef(c echo.Context) (uuid.UUID, int64, error) {
	id, err := routeID(c)
	if err != nil {
		return id, 0, err
	}
	job, err := strconv.ParseInt(c.Param("job"), 10, 64)
	if err != nil || job <= 0 {
		return id, 0, domain.ErrNotFound
	}
	return id, job, nil
}

func (h *Handler) deliveryShow(c echo.Context, s *Session) error {
	id, job, err := deliveryRef(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	e, err := h.getEndpoint(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	v, err := h.webhooks.delivery.Call(c.Request().Context(), s.Caller, webhook.DeliveryIDInput{ID: id, JobID: job})
	if err != nil {
		return h.fail(c, s, err)
	}
	d := deliveryDetailOf(v)
	return h.render(c, http.StatusOK, "delivery", view{Title: fmt.Sprintf("Delivery %d", job), Section: "webhooks", Session: s,
		Notice: notice(c), Data: deliveryData{Endpoint: e, Delivery: d, CSRF: s.CSRFToken, Refresh: !d.Final()}})
}

type deliveryData struct {
	Endpoint endpoint
	Delivery deliveryDetail
	CSRF     string
	Refresh  bool
}

// deliverySteer runs retry now (resend false) or send again (resend true)
// and goes back to the page the form names (the log or the delivery's
// page).
func (h *Handler) deliverySteer(resend bool, noticeName string) func(c echo.Context, s *Session) error {
	return func(c echo.Context, s *Session) error {
		id, job, err := deliveryRef(c)
		if err != nil {
			return h.fail(c, s, err)
		}
		name := "webhooks.retry_delivery"
		var steer *op.Handle[webhook.DeliveryIDInput, webhook.RetryOutput]
		switch {
		case resend:
			name = "webhooks.resend_delivery"
			if h.webhooks != nil {
				steer = h.webhooks.resend
			}
		case h.webhooks != nil:
			steer = h.webhooks.retry
		}
		if steer == nil {
			return h.fail(c, s, notDeclared(name))
		}
		if _, err := steer.Call(c.Request().Context(), s.Caller, webhook.DeliveryIDInput{ID: id, JobID: job}); err != nil {
			return h.failOnEndpoint(c, s, id, err)
		}
		back := "/admin/webhooks/" + id.String()
		if c.FormValue("back") == "delivery" {
			back += "/deliveries/" + strconv.FormatInt(job, 10)
		}
		return c.Redirect(http.StatusSeeOther, back+"?notice="+noticeName+"&job="+strconv.FormatInt(job, 10))
	}
}

func (h *Handler) webhookRecover(c echo.Context, s *Session) error {
	return h.endpointAction(c, s, "webhooks.recover", func(ctx context.Context, id uuid.UUID) (string, error) {
		res, err := h.webhooks.recover.Call(ctx, s.Caller, webhook.RecoverInput{ID: id, Since: formTime(c.FormValue("since")), Until: formTime(c.FormValue("until"))})
		return "notice=recovered&events=" + strconv.Itoa(res.Events) + "&count=" + strconv.Itoa(res.Queued) + "&existing=" + strconv.Itoa(res.Existing) +
			"&skipped=" + strconv.Itoa(len(res.Skipped)) + skipQuery(res.Skipped), err
	})
}

// endpointEnabled sets whether the endpoint gets deliveries.
func (h *Handler) endpointEnabled(c echo.Context, s *Session, enabled bool, q string) error {
	return h.endpointAction(c, s, "webhooks.update", func(ctx context.Context, id uuid.UUID) (string, error) {
		_, err := h.webhooks.update.Call(ctx, s.Caller, webhook.UpdateInput{ID: id, Enabled: &enabled})
		return q, err
	})
}

func (h *Handler) webhookEnable(c echo.Context, s *Session) error {
	return h.endpointEnabled(c, s, true, "notice=enabled")
}

// webhookDisable disables the endpoint after a confirmation step: nothing
// is sent to it until it is enabled again.
func (h *Handler) webhookDisable(c echo.Context, s *Session) error {
	if !confirmed(c) {
		return h.confirmOnEndpoint(c, s, "/disable", func(e endpoint) confirmData {
			return confirmData{Heading: "Disable " + e.URL + "?", Button: "Disable endpoint", Danger: true,
				Lines: []string{"Nothing is sent to it until it is enabled again: new events get no delivery (recover them later), " +
					"and its waiting and retrying deliveries are cancelled when they come due."}}
		})
	}
	return h.endpointEnabled(c, s, false, "notice=disabled")
}

func (h *Handler) webhookDeleteConfirm(c echo.Context, s *Session) error {
	_, e, err := h.routeEndpoint(c, s)
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
	if h.webhooks == nil {
		return h.fail(c, s, notDeclared("webhooks.delete"))
	}
	if _, err := h.webhooks.delete.Call(c.Request().Context(), s.Caller, webhook.IDInput{ID: id}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/webhooks?notice=deleted")
}

type webhookEditData struct {
	Endpoint endpoint
	Form     webhookForm
	Groups   []eventTypeGroup
	CSRF     string
	// Embeds are the scopes the form offers beside standalone; nil when
	// this server has no access pages.
	Embeds []access.EmbedView
}

// editForm is the edit form filled from e: the types that name a declared
// type are checked, the others (globs) listed as text; the headers field
// starts empty, since values may be credentials and are not shown.
func editForm(e endpoint) webhookForm {
	f := webhookForm{URL: e.URL, Description: e.Description, Enabled: e.Enabled,
		MaxInFlight: strconv.Itoa(e.MaxInFlight), TimeoutSeconds: strconv.Itoa(e.TimeoutSeconds), MaxAttempts: strconv.Itoa(e.MaxAttempts)}
	if e.RateLimitPerSecond != nil && e.RateLimitBurst != nil {
		f.RateLimit, f.RateBurst = strconv.Itoa(*e.RateLimitPerSecond), strconv.Itoa(*e.RateLimitBurst)
	}
	var globs []string
	for _, t := range e.EventTypes {
		if et, ok := domain.LookupEventType(t); ok && et.Exposure == domain.Webhook {
			f.EventTypes = append(f.EventTypes, t)
		} else {
			globs = append(globs, t)
		}
	}
	f.Globs = strings.Join(globs, " ")
	f.Filter = e.Filter
	if e.EmbedID != nil {
		f.EmbedID = e.EmbedID.String()
	}
	return f
}

func (h *Handler) webhookEdit(c echo.Context, s *Session) error {
	_, e, err := h.routeEndpoint(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	if e.Deleted() {
		return h.fail(c, s, domain.Conflict("ENDPOINT_DELETED", "the endpoint is deleted; it can no longer be changed"))
	}
	return h.render(c, http.StatusOK, "webhook_edit", view{Title: "Edit endpoint", Section: "webhooks", Session: s,
		Data: webhookEditData{Endpoint: e, Form: editForm(e), Groups: eventTypeGroups(), CSRF: s.CSRFToken, Embeds: h.scopeChoices(c, s)}})
}

// webhookUpdate sends every field of the edit form to webhooks.update; the
// custom headers are replaced only when some are typed or "remove all" is
// ticked.
func (h *Handler) webhookUpdate(c echo.Context, s *Session) error {
	id, e, err := h.routeEndpoint(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	f := readWebhookForm(c)
	again := func(err error) error {
		status, detail := h.describe(c, err)
		return h.render(c, status, "webhook_edit", view{Title: "Edit endpoint", Section: "webhooks", Session: s, Error: detail,
			Data: webhookEditData{Endpoint: e, Form: f, Groups: eventTypeGroups(), CSRF: s.CSRFToken, Embeds: h.scopeChoices(c, s)}})
	}
	types := append([]string(nil), f.EventTypes...)
	types = append(types, splitList(f.Globs)...)
	in := webhook.UpdateInput{ID: id, URL: &f.URL, Description: &f.Description, EventTypes: types, Filter: json.RawMessage("null")}
	if f.Filter != "" {
		in.Filter = json.RawMessage(f.Filter)
	}
	headers, err := parseHeaders(f.Headers)
	if err != nil {
		return again(err)
	}
	switch {
	case f.ClearHeaders && len(headers) > 0:
		return again(domain.Validation("INVALID_HEADERS", "either type new headers or remove them all, not both").WithField("headers"))
	case f.ClearHeaders:
		in.Headers = map[string]string{}
	case len(headers) > 0:
		in.Headers = headers
	}
	if f.EmbedID == "" {
		in.DetachEmbed()
	} else {
		eid, err := uuid.Parse(f.EmbedID)
		if err != nil {
			return again(domain.Validation("INVALID_EMBED_ID", "the embed id is not a valid id").WithField("embed_id"))
		}
		in.EmbedID = &eid
	}
	if err := f.settings(&in.MaxInFlight, &in.TimeoutSeconds, &in.MaxAttempts, &in.RateLimitPerSecond, &in.RateLimitBurst); err != nil {
		return again(err)
	}
	if f.RateLimit == "" {
		// The edit form shows the limit: cleared, it is removed.
		none := 0
		in.RateLimitPerSecond, in.RateLimitBurst = &none, nil
	}
	if _, err := h.webhooks.update.Call(c.Request().Context(), s.Caller, in); err != nil {
		return again(err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/webhooks/"+id.String()+"?notice=updated")
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

// skipQuery counts the skipped events by reason, as query parameters
// skip_<reason>=n for the notice.
func skipQuery(skipped []webhook.SkippedEvent) string {
	n := map[string]int{}
	for _, sk := range skipped {
		n[sk.Reason]++
	}
	q := ""
	for _, r := range webhook.SkipReasons {
		if n[r] > 0 {
			q += "&skip_" + r + "=" + strconv.Itoa(n[r])
		}
	}
	return q
}

// skipReasons says, from skipQuery's parameters, how many events were left
// alone for which reason ("" when none is given).
func skipReasons(c echo.Context) string {
	var parts []string
	for _, r := range webhook.SkipReasons {
		v := c.QueryParam("skip_" + r)
		if n, err := strconv.ParseUint(v, 10, 63); err == nil && n > 0 {
			parts = append(parts, v+" "+webhook.SkipReasonText(r))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " Skipped: " + strings.Join(parts, "; ") + "."
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
		return digits("count") + " deliveries queued again: " + digits("discarded") + " failed (River: discarded) and " +
			digits("cancelled") + " cancelled; " + digits("skipped") + " left alone because the endpoint's subscription, scope or filter " +
			"keeps their event out now (or the event was pruned)." + skipReasons(c) + " Retrying and waiting ones are not taken: use Retry now on one."
	case "retried":
		return "Delivery " + digits("job") + " runs now."
	case "resent":
		return "Delivery " + digits("job") + " is sent again (same webhook-id)."
	case "recovered":
		return digits("events") + " events in the range: " + digits("count") + " new deliveries queued, " + digits("existing") +
			" already had a delivery and were left alone, " + digits("skipped") + " skipped because the endpoint's subscription, scope or " +
			"filter keeps them out (as the fan-out does)." + skipReasons(c)
	case "enabled":
		return "Endpoint enabled; its failure state was cleared."
	case "disabled":
		return "Endpoint disabled: no deliveries are made until it is enabled again."
	case "deleted":
		return "Endpoint deleted: it gets no more deliveries; its delivery log stays readable under the \"deleted\" filter until the retention removes it."
	case "updated":
		return "Endpoint updated."
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
