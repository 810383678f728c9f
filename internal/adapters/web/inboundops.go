package web

import (
	"encoding/json"
	"fmt"

	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// inboundOps are the inbound source ops as the inbound pages call them:
// typed handles with the inbound domain's own types, resolved once when
// the UI is built.
type inboundOps struct {
	list              op.Handle[op.PageInput, op.Page[inbound.SourceView]]
	create            op.Handle[inbound.CreateSourceInput, inbound.CreatedSource]
	get               op.Handle[inbound.SourceIDInput, inbound.SourceView]
	update            op.Handle[inbound.UpdateSourceInput, inbound.SourceView]
	delete            op.Handle[inbound.SourceIDInput, op.Empty]
	rotate            op.Handle[inbound.RotateSecretInput, inbound.RotatedSecret]
	messages          op.Handle[inbound.ListMessagesInput, op.Page[inbound.MessageView]]
	message           op.Handle[inbound.MessageInput, inbound.MessageDetail]
	deadLetters       op.Handle[inbound.ListDeadLettersInput, op.Page[inbound.MessageView]]
	replayDeadLetter  op.Handle[inbound.ReplayDeadLetterInput, inbound.MessageView]
	replayDeadLetters op.Handle[inbound.ReplayDeadLettersInput, inbound.ReplayCount]
	// refusals is nil when the set does not declare inbound_sources.refusals
	// (the source page then leaves the refusals out).
	refusals *op.Handle[inbound.SourceIDInput, inbound.RefusalList]
}

// inboundOpsOf resolves the inbound pages' handles in ops. It returns nil
// when ops has no inbound section (no inbound_sources.list), and fails,
// naming the op, when the section is there but one of its ops is missing
// or has other types.
func inboundOpsOf(ops op.Set) (*inboundOps, error) {
	if _, ok := ops.Find("inbound_sources.list"); !ok {
		return nil, nil
	}
	var o inboundOps
	hs := handles{ops: ops}
	bind(&hs, &o.list, "inbound_sources.list")
	bind(&hs, &o.create, "inbound_sources.create")
	bind(&hs, &o.get, "inbound_sources.get")
	bind(&hs, &o.update, "inbound_sources.update")
	bind(&hs, &o.delete, "inbound_sources.delete")
	bind(&hs, &o.rotate, "inbound_sources.rotate_secret")
	bind(&hs, &o.messages, "inbound_sources.messages")
	bind(&hs, &o.message, "inbound_sources.message")
	bind(&hs, &o.deadLetters, "inbound_sources.dead_letters")
	bind(&hs, &o.replayDeadLetter, "inbound_sources.replay_dead_letter")
	bind(&hs, &o.replayDeadLetters, "inbound_sources.replay_dead_letters")
	bindOptional(&hs, &o.refusals, "inbound_sources.refusals")
	if err := hs.err("the inbound pages need the inbound source ops"); err != nil {
		return nil, err
	}
	return &o, nil
}

// sourceOf is the page's view of a source: its kind's options as text (a
// string option as it is, any other value as its JSON).
func sourceOf(v inbound.SourceView) source {
	s := source{ID: v.ID, Name: v.Name, Verifier: v.Verifier, Enabled: v.Enabled, RecordEvents: v.RecordEvents, BodyLimitBytes: v.BodyLimitBytes,
		ToleranceSeconds: v.ToleranceSeconds, ReceiveURL: v.ReceiveURL, SecretRotatedAt: v.SecretRotatedAt,
		PreviousSecretExpiresAt: v.PreviousSecretExpiresAt, CreatedAt: v.CreatedAt, Options: map[string]string{}}
	for k, raw := range v.Options {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			s.Options[k] = str
		} else {
			s.Options[k] = string(raw)
		}
	}
	return s
}

// messageOf is the page's view of an inbox message.
func messageOf(v inbound.MessageView) message {
	return message{ID: v.ID, MessageID: v.MessageID, EventType: v.EventType, State: string(v.State), Status: v.Status,
		StatusDetail: v.StatusDetail, Attempts: v.Attempts, LastError: v.LastError, ReceivedAt: v.ReceivedAt,
		LastAttemptAt: v.LastAttemptAt, NextAttemptAt: v.NextAttemptAt, DeadAt: v.DeadAt, Replays: v.Replays,
		JobID: v.JobID, TaskURL: v.TaskURL}
}

// messagesOf is the page's view of a list of messages.
func messagesOf(vs []inbound.MessageView) []message {
	out := make([]message, 0, len(vs))
	for _, v := range vs {
		out = append(out, messageOf(v))
	}
	return out
}

// optionsJSON are options typed as text as the op takes them: each a JSON
// string, one typed empty as null when empty says it is removed.
func optionsJSON(texts map[string]string, emptyIsNull bool) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(texts))
	for k, text := range texts {
		if text == "" && emptyIsNull {
			out[k] = json.RawMessage("null")
			continue
		}
		b, err := json.Marshal(text)
		if err != nil {
			return nil, fmt.Errorf("web: option %s: %w", k, err)
		}
		out[k] = b
	}
	return out, nil
}
