package webhook_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// TestOutcomeNamesWhatNeedsTheOwnerFirst: an event's outcome counts its
// deliveries by owner status (a delivery ended at its last attempt is
// failed, not cancelled), names the status that needs the owner first,
// and says it in words.
func TestOutcomeNamesWhatNeedsTheOwnerFirst(t *testing.T) {
	t.Parallel()
	d := func(state string, failedBefore bool, attempt int) webhook.EventDelivery {
		return webhook.EventDelivery{Delivery: webhook.Delivery{State: state, FailedBefore: failedBefore, Attempt: attempt, MaxAttempts: 3}}
	}
	for _, c := range []struct {
		name       string
		ds         []webhook.EventDelivery
		status     string
		text       string
		deliveries int
	}{
		{"none", nil, webhook.StatusNone, "no delivery", 0},
		{"all delivered", []webhook.EventDelivery{d("completed", false, 1), d("completed", true, 2)}, webhook.StatusDelivered, "delivered to 2", 2},
		{"one retrying", []webhook.EventDelivery{d("completed", false, 1), d("scheduled", true, 1)}, webhook.StatusRetrying, "1 retrying, delivered to 1", 2},
		{"a first wait", []webhook.EventDelivery{d("scheduled", false, 0)}, webhook.StatusWaiting, "1 waiting", 1},
		{"ended at the last attempt", []webhook.EventDelivery{d("cancelled", true, 3), d("retryable", true, 1)}, webhook.StatusFailed, "1 failed, 1 retrying", 2},
		{"cancelled", []webhook.EventDelivery{d("cancelled", false, 0), d("running", false, 1)}, webhook.StatusSending, "1 sending, 1 cancelled", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			id := uuid.New()
			o := webhook.OutcomeOf(id, c.ds)
			require.Equal(t, id, o.EventID)
			require.Equal(t, c.status, o.Status)
			require.Equal(t, c.text, o.Text)
			require.Equal(t, c.deliveries, o.Deliveries)
		})
	}
}
