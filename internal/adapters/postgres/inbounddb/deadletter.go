package inbounddb

import (
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// NewDeadLetters returns the unit of work in which a message becomes a dead
// letter (inbound.ProcessorDeps.DeadLetters): the inbox's change and the
// event rec records, in one transaction of db.
func NewDeadLetters(db DB, rec uow.Recorder) *uow.UnitOfWork[inbound.DeadLetterTx] {
	return uow.New(db, rec, func(tx pgx.Tx, rec domain.Recorder) inbound.DeadLetterTx { return deadLetterTxn{tx: tx, rec: rec} })
}

type deadLetterTxn struct {
	tx  pgx.Tx
	rec domain.Recorder
}

func (t deadLetterTxn) Inbox() inbound.InboxStates { return inboxStore{t.tx} }
func (t deadLetterTxn) Recorder() domain.Recorder  { return t.rec }
