package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

type jobData struct {
	Job  riverjob.Job
	Args string
	// Status is the job's state in an owner's words (River's state stays
	// beside it, as a detail).
	Status string
	// Links lead from the job to what it works on (a delivery's endpoint,
	// its attempts and its event), empty for other kinds.
	Links []jobLink
}

// jobLink is one page the job page links to.
type jobLink struct{ Label, Href string }

// linksOf names the pages of what a webhook delivery job works on.
func linksOf(j riverjob.Job) []jobLink {
	if j.Kind != (riverjob.WebhookDeliverArgs{}).Kind() {
		return nil
	}
	var a struct {
		EndpointID string `json:"endpoint_id"`
		EventID    string `json:"event_id"`
	}
	if json.Unmarshal(j.Args, &a) != nil || a.EndpointID == "" {
		return nil
	}
	ep := "/admin/webhooks/" + url.PathEscape(a.EndpointID)
	links := []jobLink{
		{"The delivery and its attempts", ep + "/deliveries/" + strconv.FormatInt(j.ID, 10)},
		{"Its endpoint", ep},
	}
	if a.EventID != "" {
		links = append(links, jobLink{"Its event", "/admin/events/" + url.PathEscape(a.EventID)})
	}
	return links
}

// jobStatus names a job's state for an owner: a delivery's status, or for
// another job the same words with "done" for a completed one.
func jobStatus(j riverjob.Job) string {
	st := webhook.DeliveryStatus(j.State, len(j.Errors) > 0, j.Attempt, j.MaxAttempts)
	if st == webhook.StatusDelivered && j.Kind != (riverjob.WebhookDeliverArgs{}).Kind() {
		return "done"
	}
	return st
}

// jobShow is the owner's page for one of their jobs, where a delivery's
// task link (/admin/tasks?job=<id>) leads every owner but the operator.
func (h *Handler) jobShow(c echo.Context, s *Session) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return h.fail(c, s, domain.NotFound("NOT_FOUND", "no such job"))
	}
	if h.events.job == nil {
		return h.fail(c, s, notDeclared("jobs.get"))
	}
	j, err := h.events.job.Call(c.Request().Context(), s.Caller, riverjob.JobInput{ID: id})
	if err != nil {
		return h.fail(c, s, err)
	}
	args, err := json.MarshalIndent(j.Args, "", "  ")
	if err != nil {
		args = j.Args
	}
	return h.render(c, http.StatusOK, "job", view{Title: "Job " + strconv.FormatInt(j.ID, 10), Section: "webhooks", Session: s, Data: jobData{Job: j, Args: string(args), Status: jobStatus(j), Links: linksOf(j)}})
}
