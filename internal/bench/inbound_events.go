package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// runW4Events is W4 with inbound.message.received against W4 without it:
// two standard-webhooks sources of one owner, one recording the event (the
// default) and one with record_events off, loaded in eight turns (on, off,
// off, on, off, on, on, off) so drift in the machine's load falls on both
// sides alike. Each turn waits until its messages are processed and its
// events relayed, so one side's backlog never runs in the other's turn, and
// its rate counts that drain: messages accepted over the time from the
// first request to the last answer, or to the last message or event that
// settled later (its done_at or fanned_out_at, read from the database
// rather than from when a poll saw it). It reports the mean rate with
// events against the mean without, the database work per message of each
// side's first turn, and a problem below 0.85.
func (b *ServerBench) runW4Events(ctx context.Context) error {
	a, err := b.NewOwner(ctx, "w4events")
	if err != nil {
		return err
	}
	on, err := a.CreateInboundSource(ctx, "events on")
	if err != nil {
		return err
	}
	off, err := a.CreateQuietInboundSource(ctx, "events off")
	if err != nil {
		return err
	}
	keys := map[string][]byte{}
	for name, src := range map[string]InboundSource{"on": on, "off": off} {
		if keys[name], err = standardwebhooks.ParseSecret(src.Secret); err != nil {
			return err
		}
	}
	n := b.o.scale(2500)
	rates := map[string][]float64{}
	for i, side := range []string{"on", "off", "off", "on", "off", "on", "on", "off"} {
		src := on
		if side == "off" {
			src = off
		}
		var res LoadResult
		var settled time.Duration
		prefix := fmt.Sprintf("msg_w4e%d_", i)
		turn := func() (int64, error) {
			start := time.Now()
			res = b.sendW4(ctx, src.ID, keys[side], prefix, n)
			accepted := res.Statuses[http.StatusAccepted]
			if accepted != n {
				return 0, fmt.Errorf("W4 events %s: %d of %d accepted (statuses %v, %d transport errors)", side, accepted, n, res.Statuses, res.Errors)
			}
			if err := b.waitInboxDone(ctx, src.ID, -1); err != nil {
				return 0, err
			}
			if err := b.waitRelayed(ctx); err != nil {
				return 0, err
			}
			last, err := b.lastSettled(ctx, src.ID, prefix, start)
			if err != nil {
				return 0, err
			}
			// A message admitted done settled when its 202 arrived.
			settled = max(last.Sub(start), res.Elapsed)
			return int64(accepted), nil
		}
		if i < 2 { // one turn of each side, first on, then off
			err = b.MeasureWork(ctx, "w4_events_"+side, "message", turn)
		} else {
			_, err = turn()
		}
		if err != nil {
			return err
		}
		rates[side] = append(rates[side], float64(n)/settled.Seconds())
		b.r.Note("W4 events %s (turn %d): %d accepted at %.0f/s, all settled at %.0f/s", side, i+1, n,
			float64(n)/res.Elapsed.Seconds(), float64(n)/settled.Seconds())
	}
	withEvents, without := mean(rates["on"]), mean(rates["off"])
	b.r.Add(Figure{Key: "w4_events_per_s", Label: fmt.Sprintf("W4 with inbound.message.received, %d messages a turn, received to settled", n),
		Unit: "/s", Value: withEvents, Ceiling: "the same source kind with record_events off, measured in turns", CeilingValue: without})
	ratio := Ratio(withEvents, without)
	b.r.Extra["w4_events_vs_off_ratio"] = ratio
	b.r.Note("W4 events: on %s messages/s, off %s (in turns): %.2f of off", rateList(rates["on"]), rateList(rates["off"]), ratio)
	if ratio < 0.85 {
		b.Problem("W4 events: with inbound.message.received the inbound rate ran at %.2f of the rate without (bound 0.85)", ratio)
	}
	return nil
}

// rateList spells rates as "a, b, c".
func rateList(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.0f", r)
	}
	return strings.Join(parts, ", ")
}

// lastSettled returns when the last of a turn's messages (those of the
// source whose id starts with prefix) or of their inbound.message.received
// events settled, by the database's clock: the message's done_at, the
// event's fanned_out_at. The turn waited for both beforehand.
func (b *ServerBench) lastSettled(ctx context.Context, sourceID, prefix string, since time.Time) (time.Time, error) {
	source, err := uuid.Parse(sourceID)
	if err != nil {
		return time.Time{}, fmt.Errorf("W4 events: source id %q: %w", sourceID, err)
	}
	var last *time.Time
	err = b.Pool.QueryRow(ctx, `SELECT greatest(
  (SELECT max(done_at) FROM inbound_messages WHERE source_id = $1 AND starts_with(message_id, $2)),
  (SELECT max(fanned_out_at) FROM events WHERE subject = $3 AND occurred_at >= $4))`,
		source, prefix, inbound.ReceivedSubject(source), since).Scan(&last)
	if err != nil {
		return time.Time{}, fmt.Errorf("W4 events: when the turn settled: %w", err)
	}
	if last == nil {
		return time.Time{}, fmt.Errorf("W4 events: no message of the turn %s settled", prefix)
	}
	return *last, nil
}

// waitRelayed waits, for up to two minutes, until the relay has fanned out
// every event recorded so far.
func (b *ServerBench) waitRelayed(ctx context.Context) error {
	return b.waitCount(ctx, func(n int) bool { return n == 0 },
		func(n int) error { return fmt.Errorf("%d events not relayed after two minutes", n) },
		`SELECT count(*) FROM events WHERE fanned_out_at IS NULL AND poisoned_at IS NULL`)
}
