package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/owner/webhook"
)

type rotatedData struct {
	Name, Secret, Continue string
	// Source is true for an inbound source (its secret verifies what
	// arrives), false for an endpoint (its secret signs what leaves).
	Source bool
	// GraceUntil is when the previous secret stops being used.
	GraceUntil time.Time
}

// webhookRotate gives an endpoint a new signing secret after a confirmation
// step that says the old one keeps signing for the grace period.
func (h *Handler) webhookRotate(c echo.Context, s *Session) error {
	id, e, err := h.routeEndpoint(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	grace := webhook.SecretGrace
	if !confirmed(c) {
		first := "A new signing secret is generated and shown once."
		if e.Ed25519() {
			first = "A new ed25519 key pair is generated; the endpoint page shows its public key (the private key never leaves this instance)."
		}
		return h.confirm(c, s, "webhooks", confirmData{
			Heading: "Rotate the signing secret?", Action: "/admin/webhooks/" + id.String() + "/rotate", Button: "Rotate secret", Back: "/admin/webhooks/" + id.String(),
			Lines: []string{
				first,
				"The current secret stays valid for " + hours(grace) + " (until about " + time.Now().Add(grace).UTC().Format("2006-01-02 15:04 UTC") + "): " +
					"every delivery meanwhile carries two signatures, one per secret, so the receiver keeps verifying while it switches. After that only the new secret signs.",
				"Rotating again within those " + hours(grace) + " drops the oldest secret at once.",
			},
		})
	}
	res, err := h.webhooks.rotate.Call(c.Request().Context(), s.Caller, webhook.IDInput{ID: id})
	if err != nil {
		return h.fail(c, s, err)
	}
	if res.PublicKey != "" {
		// ed25519: the page shows the new public key beside the previous one.
		return c.Redirect(http.StatusSeeOther, "/admin/webhooks/"+id.String())
	}
	d := rotatedData{Name: e.URL, Secret: res.Secret, Continue: "/admin/webhooks/" + id.String(), GraceUntil: time.Now().Add(grace)}
	if res.RotationGraceUntil != nil {
		d.GraceUntil = *res.RotationGraceUntil
	}
	return h.render(c, http.StatusOK, "webhook_rotated", view{Title: "New signing secret", Section: "webhooks", Session: s, Data: d})
}

// Grace is when the previous secret stops signing, while that is ahead.
func (e endpoint) Grace() *time.Time {
	if e.RotationGraceUntil == nil || !e.RotationGraceUntil.After(time.Now()) {
		return nil
	}
	return e.RotationGraceUntil
}

// hours says a duration in whole hours ("24 hours").
func hours(d time.Duration) string {
	return strconv.Itoa(int(d/time.Hour)) + " hours"
}
