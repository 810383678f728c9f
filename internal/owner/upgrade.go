package owner

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// MaxUpgradeNoteLen bounds the note an owner attaches to an upgrade request.
const MaxUpgradeNoteLen = 2000

// UpgradeRequest is an accepted request to upgrade the instance. The
// request is the event itself: whatever performs upgrades subscribes to
// instance.upgrade_requested.
type UpgradeRequest struct {
	EventID     uuid.UUID `json:"event_id"`
	RequestedAt time.Time `json:"requested_at"`
}

// RequestUpgrade records instance.upgrade_requested for the owner. The
// optional note is validated, but the event carries only whether there was
// one: events are thin and free text does not leave the instance. The
// upgrade itself is out of this domain's scope.
func (s *Service) RequestUpgrade(ctx context.Context, ownerID uuid.UUID, note string) (UpgradeRequest, error) {
	note = strings.TrimSpace(note)
	if !utf8.ValidString(note) || utf8.RuneCountInString(note) > MaxUpgradeNoteLen {
		return UpgradeRequest{}, domain.Validation(CodeInvalidNote, fmt.Sprintf("note must have at most %d characters", MaxUpgradeNoteLen)).WithField("note")
	}
	now := s.now()
	var eventID uuid.UUID
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		eventID, err = tx.Recorder().Record(ctx, ownerID, domain.EventInstanceUpgradeRequested, "instance", map[string]any{
			"owner_id":     ownerID,
			"has_note":     note != "",
			"requested_at": now,
		})
		return err
	})
	if err != nil {
		return UpgradeRequest{}, fmt.Errorf("request upgrade: %w", err)
	}
	return UpgradeRequest{EventID: eventID, RequestedAt: now}, nil
}
