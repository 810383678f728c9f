package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
)

// job is one River job as the contract's jobs.get returns it.
type job struct {
	ID          int64           `json:"id"`
	Kind        string          `json:"kind"`
	Queue       string          `json:"queue"`
	State       string          `json:"state"`
	Attempt     int             `json:"attempt"`
	MaxAttempts int             `json:"max_attempts"`
	Args        json.RawMessage `json:"args"`
	Errors      []struct {
		At      time.Time `json:"at"`
		Attempt int       `json:"attempt"`
		Error   string    `json:"error"`
	} `json:"errors"`
	CreatedAt   time.Time  `json:"created_at"`
	ScheduledAt time.Time  `json:"scheduled_at"`
	AttemptedAt *time.Time `json:"attempted_at"`
	FinalizedAt *time.Time `json:"finalized_at"`
}

type jobData struct {
	Job  job
	Args string
}

// jobShow is the owner's page for one of their jobs, where a delivery's
// task link (/admin/tasks?job=<id>) leads every owner but the operator.
func (h *Handler) jobShow(c echo.Context, s *Session) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return h.fail(c, s, domain.NotFound("NOT_FOUND", "no such job"))
	}
	var j job
	if err := h.call(c.Request().Context(), s, "jobs.get", map[string]any{"id": id}, &j); err != nil {
		return h.fail(c, s, err)
	}
	args, err := json.MarshalIndent(j.Args, "", "  ")
	if err != nil {
		args = j.Args
	}
	return h.render(c, http.StatusOK, "job", view{Title: "Job " + strconv.FormatInt(j.ID, 10), Section: "webhooks", Session: s, Data: jobData{Job: j, Args: string(args)}})
}
