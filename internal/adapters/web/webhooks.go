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
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// endpoint is a webhook endpoint as the contract returns it.
type endpoint struct {
	ID             uuid.UUID         `json:"id"`
	URL            string            `json:"url"`
	Description    string            `json:"description"`
	EventTypes     []string          `json:"event_types"`
	EmbedID        *uuid.UUID        `json:"embed_id"`
	Headers        map[string]string `json:"headers"`
	MaxInFlight    int               `json:"max_in_flight"`
	TimeoutSeconds int               `json:"timeout_seconds"`
	MaxAttempts    int               `json:"max_attempts"`
	Enabled        bool              `json:"enabled"`
	// State is "enabled", "failing", "disabled" or "deleted".
	State          string     `json:"state"`
	DisabledReason *string    `json:"disabled_reason"`
	FailingSince   *time.Time `json:"failing_since"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	DeletedAt      *time.Time `json:"deleted_at"`
	Health         *health    `json:"health"`
	// RotationGraceUntil is when the previous secret stops signing.
	RotationGraceUntil *time.Time `json:"rotation_grace_until"`
	// Secret is only in the answer of webhooks.create.
	Secret string `json:"secret"`
}

// health is an endpoint's recent outcomes as webhooks.list returns them.
type health struct {
	LastSuccessAt  *time.Time `json:"last_success_at"`
	LastFailureAt  *time.Time `json:"last_failure_at"`
	LastFailure    *string    `json:"last_failure"`
	Attempts24h    int        `json:"attempts_24h"`
	Succeeded24h   int        `json:"succeeded_24h"`
	SuccessRate24h *float64   `json:"success_rate_24h"`
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
	JobID       int64      `json:"job_id"`
	EventID     string     `json:"event_id"`
	EventType   string     `json:"event_type"`
	State       string     `json:"state"`
	Status      string     `json:"status"`
	WaitingFor  string     `json:"waiting_for"`
	Attempt     int        `json:"attempt"`
	MaxAttempts int        `json:"max_attempts"`
	StatusCode  *int       `json:"status_code"`
	LatencyMS   *int       `json:"latency_ms"`
	Response    *string    `json:"response"`
	LastError   *string    `json:"last_error"`
	AttemptedAt *time.Time `json:"attempted_at"`
	CreatedAt   time.Time  `json:"created_at"`
	ScheduledAt time.Time  `json:"scheduled_at"`
	TaskURL     string     `json:"task_url"`
}

// deliveryOf is the page's view of a delivery.
func deliveryOf(d webhook.Delivery) delivery {
	return delivery{JobID: d.JobID, EventID: d.EventID.String(), EventType: d.EventType, State: d.State, Status: d.Status,
		WaitingFor: d.WaitingFor, Attempt: d.Attempt, MaxAttempts: d.MaxAttempts, StatusCode: d.StatusCode, LatencyMS: d.LatencyMS,
		Response: d.Response, LastError: d.LastError, AttemptedAt: d.AttemptedAt, CreatedAt: d.CreatedAt, ScheduledAt: d.ScheduledAt,
		TaskURL: d.TaskURL}
}

// StatusLabel is the owner's name of the delivery's state, with why a
// waiting one waits.
func (d delivery) StatusLabel() string {
	switch {
	case d.Status == "waiting" && d.WaitingFor == "schedule":
		return "waiting (endpoint cooldown or Retry-After)"
	case d.Status == "waiting" && d.WaitingFor == "window":
		return "waiting (behind the endpoint's deliveries in flight)"
	case d.Status == "waiting":
		return "waiting (in queue)"
	case d.Status == "cancelled":
		return "cancelled (4xx, 410 or not deliverable)"
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
	Attempts []deliveryAttempt `json:"attempts"`
	Request  *struct {
		URL     string            `json:"url"`
		Body    string            `json:"body"`
		Headers map[string]string `json:"headers"`
	} `json:"request"`
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
	Attempt    int       `json:"attempt"`
	Outcome    string    `json:"outcome"`
	StatusCode *int      `json:"status_code"`
	LatencyMS  *int      `json:"latency_ms"`
	Response   *string   `json:"response"`
	Error      *string   `json:"error"`
	Location   *string   `json:"location"`
	At         time.Time `json:"attempted_at"`
	// Headers are the headers the attempt sent, with its own timestamp
	// and signature; nil when not recorded.
	Headers map[string]string `json:"headers"`
}

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
	// The delivery settings, as typed (empty: the default).
	MaxInFlight, TimeoutSeconds, MaxAttempts string
	// ClearHeaders (edit only) removes every custom header.
	ClearHeaders bool
}

// settings adds the delivery settings typed in f to args; a value that is
// not a whole number is refused with the field's code.
func (f webhookForm) settings(args map[string]any) error {
	for _, s := range []struct{ field, value, code string }{
		{"max_in_flight", f.MaxInFlight, "INVALID_MAX_IN_FLIGHT"},
		{"timeout_seconds", f.TimeoutSeconds, "INVALID_TIMEOUT"},
		{"max_attempts", f.MaxAttempts, "INVALID_MAX_ATTEMPTS"},
	} {
		if s.value == "" {
			continue
		}
		n, err := strconv.Atoi(s.value)
		if err != nil {
			return domain.Validation(s.code, s.field+" must be a whole number").WithField(s.field)
		}
		args[s.field] = n
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
		ClearHeaders:   c.FormValue("clear_headers") != "",
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

// args returns the filter as webhooks.list arguments.
func (f webhookFilter) args() map[string]any {
	args := map[string]any{}
	for k, v := range map[string]string{"state": f.State, "event_type": f.EventType, "url": f.URL, "sort": f.Sort} {
		if v != "" {
			args[k] = v
		}
	}
	return args
}

// Query is the filter as a URL query (with a trailing '&' when not empty).
func (f webhookFilter) Query() string {
	q := url.Values{}
	for k, v := range f.args() {
		q.Set(k, v.(string))
	}
	if len(q) == 0 {
		return ""
	}
	return q.Encode() + "&"
}

// SortLink is the list's link sorted by key, reversed when it is already
// sorted by key ascending.
func (f webhookFilter) SortLink(key string) string {
	g := f
	g.Sort = key
	if f.Sort == key || (key == "created" && f.Sort == "") {
		g.Sort = "-" + key
	}
	return "/admin/webhooks?" + strings.TrimSuffix(g.Query(), "&")
}

type webhookShowData struct {
	Endpoint   endpoint
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

// deliveryPage is webhooks.deliveries' answer.
type deliveryPage struct {
	Data       []delivery `json:"data"`
	NextCursor *string    `json:"next_cursor"`
	PrevCursor *string    `json:"prev_cursor"`
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
	f := webhookFilter{State: c.QueryParam("state"), EventType: c.QueryParam("event_type"),
		URL: strings.TrimSpace(c.QueryParam("url")), Sort: c.QueryParam("sort")}
	args := f.args()
	args["limit"] = 50
	if cur := c.QueryParam("cursor"); cur != "" {
		args["cursor"] = cur
	}
	if err := h.call(c.Request().Context(), s, "webhooks.list", args, &p); err != nil {
		return h.fail(c, s, err)
	}
	d := webhookListData{Endpoints: p.Data, CSRF: s.CSRFToken, Filter: f, Types: domain.WebhookEventTypes()}
	if p.NextCursor != nil {
		d.Next = "/admin/webhooks?" + f.Query() + "cursor=" + url.QueryEscape(*p.NextCursor)
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
	f := readWebhookForm(c)
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
	if err := f.settings(args); err != nil {
		return again(err)
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
	err := h.call(c.Request().Context(), s, "webhooks.get", map[string]any{"id": id}, &e)
	return e, err
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
	var p deliveryPage
	f := deliveryFilter{State: c.QueryParam("state"), EventType: c.QueryParam("event_type"),
		Since: formTime(c.QueryParam("since")), Until: formTime(c.QueryParam("until"))}
	args := map[string]any{"id": id, "limit": 50}
	for k, v := range map[string]string{"state": f.State, "event_type": f.EventType, "since": f.Since, "until": f.Until,
		"cursor": c.QueryParam("cursor"), "before": c.QueryParam("before")} {
		if v != "" {
			args[k] = v
		}
	}
	if err := h.call(c.Request().Context(), s, "webhooks.deliveries", args, &p); err != nil {
		return h.fail(c, s, err)
	}
	// The log refreshes itself while a delivery is in flight, or while the
	// test just sent has not shown up yet.
	d := webhookShowData{Endpoint: e, Deliveries: p.Data, CSRF: s.CSRFToken, Filter: f,
		Statuses: []string{"delivered", "sending", "waiting", "retrying", "failed", "cancelled"},
		Types:    domain.WebhookEventTypes(), Steer: h.has("webhooks.retry_delivery") && h.has("webhooks.resend_delivery")}
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
		d.Next = "/admin/webhooks/" + id.String() + "?" + f.Query() + "cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if p.PrevCursor != nil {
		d.Newer = "/admin/webhooks/" + id.String() + "?" + f.Query() + "before=" + url.QueryEscape(*p.PrevCursor)
	}
	// Only the newest page refreshes: an older page's rows stay put.
	d.Refresh = d.Refresh && p.PrevCursor == nil
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
		by, _ := res["by_state"].(map[string]any)
		return "notice=redelivered&count=" + number(res["count"]) + "&discarded=" + number(by["discarded"]) +
			"&cancelled=" + number(by["cancelled"])
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
	var d deliveryDetail
	if err := h.call(c.Request().Context(), s, "webhooks.delivery", map[string]any{"id": id, "job_id": job}, &d); err != nil {
		return h.fail(c, s, err)
	}
	return h.render(c, http.StatusOK, "delivery", view{Title: fmt.Sprintf("Delivery %d", job), Section: "webhooks", Session: s,
		Notice: notice(c), Data: deliveryData{Endpoint: e, Delivery: d, CSRF: s.CSRFToken, Refresh: !d.Final()}})
}

type deliveryData struct {
	Endpoint endpoint
	Delivery deliveryDetail
	CSRF     string
	Refresh  bool
}

// deliverySteer runs retry now or send again and goes back to the page the
// form names (the log or the delivery's page).
func (h *Handler) deliverySteer(opName, noticeName string) func(c echo.Context, s *Session) error {
	return func(c echo.Context, s *Session) error {
		id, job, err := deliveryRef(c)
		if err != nil {
			return h.fail(c, s, err)
		}
		var res map[string]any
		if err := h.call(c.Request().Context(), s, opName, map[string]any{"id": id, "job_id": job}, &res); err != nil {
			return h.fail(c, s, err)
		}
		back := "/admin/webhooks/" + id.String()
		if c.FormValue("back") == "delivery" {
			back += "/deliveries/" + strconv.FormatInt(job, 10)
		}
		return c.Redirect(http.StatusSeeOther, back+"?notice="+noticeName+"&job="+strconv.FormatInt(job, 10))
	}
}

func (h *Handler) webhookRecover(c echo.Context, s *Session) error {
	extra := map[string]any{"since": formTime(c.FormValue("since"))}
	if u := formTime(c.FormValue("until")); u != "" {
		extra["until"] = u
	}
	return h.endpointAction(c, s, "webhooks.recover", extra, func(res map[string]any) string {
		return "notice=recovered&events=" + number(res["events"]) + "&count=" + number(res["queued"]) + "&existing=" + number(res["existing"])
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

type webhookEditData struct {
	Endpoint endpoint
	Form     webhookForm
	Groups   []eventTypeGroup
	CSRF     string
}

// editForm is the edit form filled from e: the types that name a declared
// type are checked, the others (globs) listed as text; the headers field
// starts empty, since values may be credentials and are not shown.
func editForm(e endpoint) webhookForm {
	f := webhookForm{URL: e.URL, Description: e.Description, Enabled: e.Enabled,
		MaxInFlight: strconv.Itoa(e.MaxInFlight), TimeoutSeconds: strconv.Itoa(e.TimeoutSeconds), MaxAttempts: strconv.Itoa(e.MaxAttempts)}
	var globs []string
	for _, t := range e.EventTypes {
		if et, ok := domain.LookupEventType(t); ok && et.Exposure == domain.Webhook {
			f.EventTypes = append(f.EventTypes, t)
		} else {
			globs = append(globs, t)
		}
	}
	f.Globs = strings.Join(globs, " ")
	if e.EmbedID != nil {
		f.EmbedID = e.EmbedID.String()
	}
	return f
}

func (h *Handler) webhookEdit(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	e, err := h.getEndpoint(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	if e.Deleted() {
		return h.fail(c, s, domain.Conflict("ENDPOINT_DELETED", "the endpoint is deleted; it can no longer be changed"))
	}
	return h.render(c, http.StatusOK, "webhook_edit", view{Title: "Edit endpoint", Section: "webhooks", Session: s,
		Data: webhookEditData{Endpoint: e, Form: editForm(e), Groups: eventTypeGroups(), CSRF: s.CSRFToken}})
}

// webhookUpdate sends every field of the edit form to webhooks.update; the
// custom headers are replaced only when some are typed or "remove all" is
// ticked.
func (h *Handler) webhookUpdate(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	e, err := h.getEndpoint(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	f := readWebhookForm(c)
	again := func(err error) error {
		status, detail := h.describe(c, err)
		return h.render(c, status, "webhook_edit", view{Title: "Edit endpoint", Section: "webhooks", Session: s, Error: detail,
			Data: webhookEditData{Endpoint: e, Form: f, Groups: eventTypeGroups(), CSRF: s.CSRFToken}})
	}
	types := append([]string(nil), f.EventTypes...)
	types = append(types, splitList(f.Globs)...)
	args := map[string]any{"id": id, "url": f.URL, "description": f.Description, "event_types": types}
	headers, err := parseHeaders(f.Headers)
	if err != nil {
		return again(err)
	}
	switch {
	case f.ClearHeaders && len(headers) > 0:
		return again(domain.Validation("INVALID_HEADERS", "either type new headers or remove them all, not both").WithField("headers"))
	case f.ClearHeaders:
		args["headers"] = map[string]string{}
	case len(headers) > 0:
		args["headers"] = headers
	}
	if f.EmbedID == "" {
		args["embed_id"] = nil
	} else {
		eid, err := uuid.Parse(f.EmbedID)
		if err != nil {
			return again(domain.Validation("INVALID_EMBED_ID", "the embed id is not a valid id").WithField("embed_id"))
		}
		args["embed_id"] = eid
	}
	if err := f.settings(args); err != nil {
		return again(err)
	}
	if err := h.call(c.Request().Context(), s, "webhooks.update", args, nil); err != nil {
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
		return digits("count") + " deliveries queued again: " + digits("discarded") + " failed (River: discarded) and " +
			digits("cancelled") + " cancelled. Retrying and waiting ones are not taken: use Retry now on one."
	case "retried":
		return "Delivery " + digits("job") + " runs now."
	case "resent":
		return "Delivery " + digits("job") + " is sent again (same webhook-id)."
	case "recovered":
		return digits("events") + " events in the range: " + digits("count") + " new deliveries queued, " + digits("existing") +
			" already had a delivery and were left alone."
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
