package inbound

import (
	"context"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// Ops declares the inbound sources' ops once; every surface (REST, MCP,
// OpenAPI, UI) is a projection of them.
func (s *Service) Ops() op.Set {
	return op.Set{
		op.New(op.Meta{
			Name: "inbound_sources.list", Scopes: op.ReadsIn(op.ScopeInbound), Summary: "List inbound webhook sources",
		}, func(ctx context.Context, c op.Caller, in op.PageInput) (op.Page[SourceView], error) {
			return s.ListSources(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.create", Scopes: op.WritesIn(op.ScopeInbound), Summary: "Create an inbound webhook source",
			Description: "Returns the source with its receive URL /hooks/{id} and, for kinds whose secret the instance generates, the secret, shown this once.",
		}, func(ctx context.Context, c op.Caller, in CreateSourceInput) (CreatedSource, error) {
			return s.CreateSource(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.stats", Scopes: op.ReadsIn(op.ScopeInbound), Summary: "Inbound charts of every source over a window: messages accepted, requests refused and dead letters per bucket, and the sources with dead letters waiting",
			Description: "window: hour (5-minute buckets), day (hourly, the default) or week (6-hour buckets). Errors: INVALID_WINDOW.",
		}, func(ctx context.Context, c op.Caller, in StatsInput) (Stats, error) {
			return s.Stats(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.source_stats", Scopes: op.ReadsIn(op.ScopeInbound), Summary: "One inbound source's charts over a window, as inbound_sources.stats",
			Description: "Errors: INVALID_WINDOW; NOT_FOUND for a source that is not yours.",
		}, func(ctx context.Context, c op.Caller, in SourceStatsInput) (Stats, error) {
			return s.SourceStats(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.get", Scopes: op.ReadsIn(op.ScopeInbound), Summary: "Get an inbound webhook source",
		}, func(ctx context.Context, c op.Caller, in SourceIDInput) (SourceView, error) {
			return s.GetSource(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.update", Scopes: op.WritesIn(op.ScopeInbound), Summary: "Change an inbound webhook source",
			Description: "Changes the name, options, enabled flag, body limit or tolerance; a disabled source answers 404 to senders.",
		}, func(ctx context.Context, c op.Caller, in UpdateSourceInput) (SourceView, error) {
			return s.UpdateSource(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.delete", Scopes: op.WritesIn(op.ScopeInbound), Summary: "Delete an inbound webhook source and its inbox",
		}, func(ctx context.Context, c op.Caller, in SourceIDInput) (op.Empty, error) {
			return op.Empty{}, s.DeleteSource(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.rotate_secret", Scopes: op.WritesIn(op.ScopeInbound), Summary: "Replace an inbound source's secret",
			Description: "Generates a new secret (shown this once) for kinds that generate theirs, or takes the provider's new secret. The previous secret keeps verifying for 24 hours (previous_secret_expires_at), then it is dropped; rotating again within those 24 hours drops it at once.",
		}, func(ctx context.Context, c op.Caller, in RotateSecretInput) (RotatedSecret, error) {
			return s.RotateSecret(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.refusals", Scopes: op.ReadsIn(op.ScopeInbound), Summary: "List the requests an inbound source refused recently",
			Description: "The last 100 refused requests of the last 24 hours, newest first, with the reason the sender got (bad signature, stale timestamp, body too large, malformed, id conflict, source disabled). Bodies are never kept.",
		}, func(ctx context.Context, c op.Caller, in SourceIDInput) (RefusalList, error) {
			return s.ListRefusals(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.messages", Scopes: op.ReadsIn(op.ScopeInbound), Summary: "List an inbound source's inbox",
			Description: "Each message has a status saying what is happening: received (waiting for its first attempt), processing, retrying (an attempt failed; the next is at next_attempt_at), done or dead (a dead letter to replay). Processing runs the handlers routed to the source's kind and event type — today the supplier connection's activation on the first message; a message no handler can want is admitted done at once (processed at its receipt, no attempt, no job_id).",
		}, func(ctx context.Context, c op.Caller, in ListMessagesInput) (op.Page[MessageView], error) {
			return s.ListMessages(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.message", Scopes: op.ReadsIn(op.ScopeInbound), Summary: "Get one inbound message with its headers and body",
		}, func(ctx context.Context, c op.Caller, in MessageInput) (MessageDetail, error) {
			return s.GetMessage(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.dead_letters", Scopes: op.ReadsIn(op.ScopeInbound), Summary: "List an inbound source's dead letters",
			Description: "Messages whose attempts ran out or whose handler failed permanently, newest first, with their last error.",
		}, func(ctx context.Context, c op.Caller, in ListDeadLettersInput) (op.Page[MessageView], error) {
			return s.ListDeadLetters(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.replay_dead_letter", Scopes: op.WritesIn(op.ScopeInbound), Summary: "Replay one dead letter",
			Description: "Makes the message pending again with a new processing job; reset_attempts (default true) gives it every attempt again.",
		}, func(ctx context.Context, c op.Caller, in ReplayDeadLetterInput) (MessageView, error) {
			return s.ReplayDeadLetter(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "inbound_sources.replay_dead_letters", Scopes: op.WritesIn(op.ScopeInbound), Summary: "Replay every dead letter of a source",
		}, func(ctx context.Context, c op.Caller, in ReplayDeadLettersInput) (ReplayCount, error) {
			return s.ReplayDeadLetters(ctx, c.OwnerID, in)
		}),
	}
}
