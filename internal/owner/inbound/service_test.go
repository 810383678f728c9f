package inbound_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

func decodeCreate(t *testing.T, body string) inbound.CreateSourceInput {
	t.Helper()
	var in inbound.CreateSourceInput
	require.NoError(t, json.Unmarshal([]byte(body), &in))
	return in
}

func TestCreateSourceGeneratesAndSealsTheSecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	created, err := b.svc.CreateSource(ctx, b.owner, decodeCreate(t, `{"name":" Acme ","verifier":"standard-webhooks"}`))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(created.Secret, "whsec_"))
	require.Equal(t, "Acme", created.Name)
	require.Equal(t, "/hooks/"+created.ID.String(), created.ReceiveURL)
	require.Equal(t, inbound.DefaultBodyLimit, created.BodyLimitBytes)
	require.Equal(t, 300, created.ToleranceSeconds)
	require.True(t, created.Enabled)

	stored, err := b.mem.Lookup(ctx, created.ID)
	require.NoError(t, err)
	plain, err := fakeBox{}.Open(stored.SealedSecret, created.ID[:])
	require.NoError(t, err, "sealed with the source id as associated data")
	require.Equal(t, created.Secret, string(plain))
	require.JSONEq(t, `{"tolerance_seconds":300}`, string(stored.Options))

	// The secret is shown this once: reads never carry it.
	got, err := b.svc.GetSource(ctx, b.owner, created.ID)
	require.NoError(t, err)
	enc, err := json.Marshal(got)
	require.NoError(t, err)
	require.NotContains(t, string(enc), "whsec_")
	require.NotContains(t, string(enc), `"secret"`)
}

func TestCreateSourceOptionsAreFlattened(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	created, err := b.svc.CreateSource(ctx, b.owner, decodeCreate(t, `{
		"name": "billing", "verifier": "hmac", "secret": "0123456789abcdef-pasted",
		"signature_header": "X-Signature", "signature_prefix": "sha256=",
		"options": {"payload": "timestamp.body", "timestamp_header": "X-Timestamp"},
		"tolerance_seconds": 60, "body_limit_bytes": 4096}`))
	require.NoError(t, err)
	require.Empty(t, created.Secret, "a pasted secret is never echoed")
	require.Equal(t, 60, created.ToleranceSeconds)
	require.Equal(t, int64(4096), created.BodyLimitBytes)

	enc, err := json.Marshal(created)
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, json.Unmarshal(enc, &obj))
	require.Equal(t, "hmac", obj["verifier"])
	require.Equal(t, "X-Signature", obj["signature_header"], "options are flattened into the source")
	require.Equal(t, "timestamp.body", obj["payload"])
	require.EqualValues(t, 60, obj["tolerance_seconds"])
	require.NotContains(t, obj, "options")
	require.NotContains(t, obj, "secret")
}

func TestCreateSourceRefusesBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cases := []struct {
		name      string
		body      string
		wantCode  string
		wantField string
	}{
		{"no name", `{"verifier":"standard-webhooks"}`, "INVALID_NAME", "name"},
		{"control characters in the name", `{"name":"a\u0007b","verifier":"standard-webhooks"}`, "INVALID_NAME", "name"},
		{"unknown kind", `{"name":"x","verifier":"carrier-pigeon"}`, "INBOUND_VERIFIER_UNKNOWN", "verifier"},
		{"pasted-secret kind without a secret", `{"name":"x","verifier":"github"}`, "INBOUND_SECRET_REQUIRED", "secret"},
		{"short secret", `{"name":"x","verifier":"github","secret":"short"}`, "INBOUND_SECRET_INVALID", "secret"},
		{"unknown option", `{"name":"x","verifier":"standard-webhooks","colour":"blue"}`, "INBOUND_OPTIONS_INVALID", "options"},
		{"body limit too large", `{"name":"x","verifier":"standard-webhooks","body_limit_bytes":999999999}`, "INVALID_BODY_LIMIT", "body_limit_bytes"},
		{"negative body limit", `{"name":"x","verifier":"standard-webhooks","body_limit_bytes":-1}`, "INVALID_BODY_LIMIT", "body_limit_bytes"},
		{"tolerance too wide", `{"name":"x","verifier":"standard-webhooks","tolerance_seconds":7200}`, "INVALID_TOLERANCE", "tolerance_seconds"},
		{"two different tolerances", `{"name":"x","verifier":"stripe","secret":"whsec_0123456789abcdef","tolerance_seconds":60,"options":{"tolerance_seconds":90}}`, "INVALID_TOLERANCE", "tolerance_seconds"},
		{"hmac without its signature header", `{"name":"x","verifier":"hmac","secret":"0123456789abcdef-pasted"}`, "INBOUND_OPTIONS_INVALID", "options"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := b.svc.CreateSource(context.Background(), b.owner, decodeCreate(t, c.body))
			de := domain.AsError(err)
			require.NotNil(t, de, "want a domain error, got %v", err)
			require.Equal(t, domain.KindValidation, de.Kind)
			require.Equal(t, c.wantCode, de.Code)
			require.Equal(t, c.wantField, de.Field)
		})
	}
}

func TestCreateSourceInputRefusesAnOptionGivenTwice(t *testing.T) {
	t.Parallel()
	var in inbound.CreateSourceInput
	err := json.Unmarshal([]byte(`{"name":"x","verifier":"hmac","encoding":"hex","options":{"encoding":"base64"}}`), &in)
	require.ErrorContains(t, err, `option "encoding" given both`)
	require.Error(t, json.Unmarshal([]byte(`{"name":7}`), &in))
	require.Error(t, json.Unmarshal([]byte(`[]`), &in))
}

func TestToleranceFromTheOptionsBecomesTheSources(t *testing.T) {
	t.Parallel()
	b := setup(t)
	created, err := b.svc.CreateSource(context.Background(), b.owner,
		decodeCreate(t, `{"name":"s","verifier":"stripe","secret":"whsec_0123456789abcdef","options":{"tolerance_seconds":120}}`))
	require.NoError(t, err)
	require.Equal(t, 120, created.ToleranceSeconds)
	require.JSONEq(t, `120`, string(created.Options["tolerance_seconds"]))
}

func TestUpdateSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	created, err := b.svc.CreateSource(ctx, b.owner, decodeCreate(t, `{"name":"billing","verifier":"hmac","secret":"0123456789abcdef-pasted",
		"signature_header":"X-Signature","signature_prefix":"sha256="}`))
	require.NoError(t, err)
	patch := func(body string) (inbound.SourceView, error) {
		var in inbound.UpdateSourceInput
		require.NoError(t, json.Unmarshal([]byte(body), &in))
		in.ID = created.ID
		return b.svc.UpdateSource(ctx, b.owner, in)
	}

	v, err := patch(`{"name":"billing v2","enabled":false,"signature_prefix":null,"encoding":"base64"}`)
	require.NoError(t, err)
	require.Equal(t, "billing v2", v.Name)
	require.False(t, v.Enabled)
	require.NotContains(t, v.Options, "signature_prefix", "null removes an option")
	require.JSONEq(t, `"base64"`, string(v.Options["encoding"]))
	require.JSONEq(t, `"X-Signature"`, string(v.Options["signature_header"]), "untouched options stay")

	v, err = patch(`{"payload":"timestamp.body","timestamp_header":"X-Ts","tolerance_seconds":30}`)
	require.NoError(t, err)
	require.Equal(t, 30, v.ToleranceSeconds)
	require.JSONEq(t, `30`, string(v.Options["tolerance_seconds"]))

	v, err = patch(`{"body_limit_bytes":2048}`)
	require.NoError(t, err)
	require.Equal(t, 30, v.ToleranceSeconds, "an unrelated change keeps the tolerance")
	require.Equal(t, int64(2048), v.BodyLimitBytes)

	_, err = patch(`{"verifier":"github"}`)
	require.ErrorIs(t, err, inbound.ErrVerifierImmutable)
	_, err = patch(`{"name":""}`)
	requireKind(t, err, domain.KindValidation)

	var in inbound.UpdateSourceInput
	require.NoError(t, json.Unmarshal([]byte(`{"name":"mine now"}`), &in))
	in.ID = created.ID
	_, err = b.svc.UpdateSource(ctx, uuid.New(), in)
	require.ErrorIs(t, err, inbound.ErrSourceNotFound, "another owner's source is not found")
}

func TestRotateSecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	src, oldKey := b.swSource(t)
	b.clock.Advance(1)
	rotated, err := b.svc.RotateSecret(ctx, b.owner, inbound.RotateSecretInput{ID: src.ID})
	require.NoError(t, err)
	require.NotNil(t, rotated.Secret)
	require.NotEqual(t, src.Secret, *rotated.Secret)
	require.Equal(t, b.clock.Now(), rotated.SecretRotatedAt)

	require.Equal(t, b.clock.Now().Add(inbound.SecretGrace), rotated.PreviousSecretExpiresAt)
	newKey, err := standardwebhooks.ParseSecret(*rotated.Secret)
	require.NoError(t, err)

	// Both secrets verify during the grace; then only the new one does.
	r1, err := b.gw.Receive(ctx, src.ID, signed(oldKey, "m-old", b.clock.Now(), `{}`))
	require.NoError(t, err, "the previous secret verifies during the grace")
	require.Equal(t, inbound.Accepted, r1.Status)
	r2, err := b.gw.Receive(ctx, src.ID, signed(newKey, "m-new", b.clock.Now(), `{}`))
	require.NoError(t, err)
	require.Equal(t, inbound.Accepted, r2.Status)
	view, err := b.svc.GetSource(ctx, b.owner, src.ID)
	require.NoError(t, err)
	require.Equal(t, rotated.SecretRotatedAt, *view.SecretRotatedAt)
	require.Equal(t, rotated.PreviousSecretExpiresAt, *view.PreviousSecretExpiresAt)

	b.clock.Advance(inbound.SecretGrace)
	_, err = b.gw.Receive(ctx, src.ID, signed(oldKey, "m-late", b.clock.Now(), `{}`))
	require.ErrorIs(t, err, verifier.ErrUnauthorized, "the previous secret stops at the end of the grace")
	_, _, err = b.svc.Maintain(ctx)
	require.NoError(t, err)
	view, err = b.svc.GetSource(ctx, b.owner, src.ID)
	require.NoError(t, err)
	require.Nil(t, view.PreviousSecretExpiresAt, "the upkeep drops the previous secret after its grace")
	_, err = b.gw.Receive(ctx, src.ID, signed(newKey, "m-new-2", b.clock.Now(), `{}`))
	require.NoError(t, err)

	gh, err := b.svc.CreateSource(ctx, b.owner, inbound.CreateSourceInput{Name: "gh", Verifier: verifier.KindGitHub, Secret: "github-webhook-secret-0123456789"})
	require.NoError(t, err)
	_, err = b.svc.RotateSecret(ctx, b.owner, inbound.RotateSecretInput{ID: gh.ID})
	require.ErrorIs(t, err, inbound.ErrSecretRequired)
	r, err := b.svc.RotateSecret(ctx, b.owner, inbound.RotateSecretInput{ID: gh.ID, Secret: "github-webhook-secret-rotated-01"})
	require.NoError(t, err)
	require.Nil(t, r.Secret, "a pasted secret is never echoed")

	_, err = b.svc.RotateSecret(ctx, uuid.New(), inbound.RotateSecretInput{ID: src.ID})
	require.ErrorIs(t, err, inbound.ErrSourceNotFound)
}

func TestListSourcesPagesNewestFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	var ids []uuid.UUID
	for range 3 {
		s, _ := b.swSource(t)
		ids = append(ids, s.ID)
		b.clock.Advance(1000)
	}
	other := setup(t) // another owner's sources never show
	_, err := b.svc.CreateSource(ctx, other.owner, inbound.CreateSourceInput{Name: "x", Verifier: verifier.KindStandardWebhooks})
	require.NoError(t, err)

	p1, err := b.svc.ListSources(ctx, b.owner, op.PageInput{Limit: 2})
	require.NoError(t, err)
	require.Len(t, p1.Data, 2)
	require.Equal(t, []uuid.UUID{ids[2], ids[1]}, []uuid.UUID{p1.Data[0].ID, p1.Data[1].ID})
	require.NotNil(t, p1.NextCursor)
	p2, err := b.svc.ListSources(ctx, b.owner, op.PageInput{Limit: 2, Cursor: *p1.NextCursor})
	require.NoError(t, err)
	require.Len(t, p2.Data, 1)
	require.Equal(t, ids[0], p2.Data[0].ID)
	require.Nil(t, p2.NextCursor)

	_, err = b.svc.ListSources(ctx, b.owner, op.PageInput{Cursor: "not-a-cursor"})
	requireKind(t, err, domain.KindValidation)
}

func TestDeleteSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	inUse, _ := b.swSource(t)
	free, key := b.swSource(t)
	b.accept(t, key, free.ID, "m1", `{}`)
	b.mem.InUseFunc = func(id uuid.UUID) bool { return id == inUse.ID }

	require.ErrorIs(t, b.svc.DeleteSource(ctx, b.owner, inUse.ID), inbound.ErrSourceInUse)
	require.ErrorIs(t, b.svc.DeleteSource(ctx, uuid.New(), free.ID), inbound.ErrSourceNotFound)
	require.NoError(t, b.svc.DeleteSource(ctx, b.owner, free.ID))
	require.Empty(t, b.mem.Messages(), "the inbox goes with its source")
	_, err := b.gw.Receive(ctx, free.ID, signed(key, "m2", b.clock.Now(), `{}`))
	require.ErrorIs(t, err, inbound.ErrSourceNotFound)
}

func TestDeadLettersListAndReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var fail atomic.Bool
	fail.Store(true)
	h := &failing{resultFunc: func(inbound.Message) error {
		if fail.Load() {
			return inbound.Permanent(errors.New("bad product code"))
		}
		return nil
	}}
	b := setup(t, inbound.Route{Name: "double", Kind: inbound.AnyKind, Handler: h})
	src, key := b.swSource(t)
	var dead []uuid.UUID
	for _, m := range []string{"m1", "m2", "m3"} {
		id := b.accept(t, key, src.ID, m, `{"m":"`+m+`"}`)
		require.Equal(t, inbound.OutcomeDead, b.process(t, id, inbound.Job{Attempt: 1, MaxAttempts: 5}).Kind)
		dead = append(dead, id)
		b.clock.Advance(1000)
	}

	page, err := b.svc.ListDeadLetters(ctx, b.owner, inbound.ListDeadLettersInput{ID: src.ID})
	require.NoError(t, err)
	require.Len(t, page.Data, 3)
	require.Equal(t, dead[2], page.Data[0].ID, "newest first")
	require.Equal(t, inbound.StateDead, page.Data[0].State)
	require.NotNil(t, page.Data[0].LastError)
	require.Contains(t, *page.Data[0].LastError, "bad product code")

	_, err = b.svc.ListDeadLetters(ctx, uuid.New(), inbound.ListDeadLettersInput{ID: src.ID})
	require.ErrorIs(t, err, inbound.ErrSourceNotFound, "another owner sees nothing")

	// Fixed; replay one with the attempts kept: it gets those it had left.
	fail.Store(false)
	f := false
	v, err := b.svc.ReplayDeadLetter(ctx, b.owner, inbound.ReplayDeadLetterInput{ID: src.ID, MessageID: dead[0], ResetAttempts: &f})
	require.NoError(t, err)
	require.Equal(t, inbound.StateReceived, v.State)
	require.Equal(t, 1, v.Attempts)
	require.Equal(t, 1, v.Replays)
	jobs := b.mem.Jobs()
	last := jobs[len(jobs)-1]
	require.Equal(t, dead[0], last.MessageID)
	require.Equal(t, 4, last.MaxAttempts)
	require.Equal(t, inbound.OutcomeDone, b.process(t, dead[0], inbound.Job{Attempt: 1, MaxAttempts: 4}).Kind)
	rec, _ := b.mem.Message(dead[0])
	require.Equal(t, inbound.StateDone, rec.State)
	require.Equal(t, 2, rec.Attempts)

	_, err = b.svc.ReplayDeadLetter(ctx, b.owner, inbound.ReplayDeadLetterInput{ID: src.ID, MessageID: dead[0]})
	require.ErrorIs(t, err, inbound.ErrNotDead)
	_, err = b.svc.ReplayDeadLetter(ctx, b.owner, inbound.ReplayDeadLetterInput{ID: uuid.New(), MessageID: dead[1]})
	require.ErrorIs(t, err, inbound.ErrMessageNotFound, "the message must belong to the source in the path")

	// Replay the rest at once, attempts reset (the default).
	n, err := b.svc.ReplayDeadLetters(ctx, b.owner, inbound.ReplayDeadLettersInput{ID: src.ID})
	require.NoError(t, err)
	require.Equal(t, 2, n.Count)
	jobs = b.mem.Jobs()
	for _, j := range jobs[len(jobs)-2:] {
		require.Equal(t, 5, j.MaxAttempts)
		require.Equal(t, inbound.OutcomeDone, b.process(t, j.MessageID, inbound.Job{ID: j.ID, Attempt: 1, MaxAttempts: 5}).Kind)
	}
	page, err = b.svc.ListDeadLetters(ctx, b.owner, inbound.ListDeadLettersInput{ID: src.ID})
	require.NoError(t, err)
	require.Empty(t, page.Data)
	all, err := b.svc.ListMessages(ctx, b.owner, inbound.ListMessagesInput{ID: src.ID, State: "done"})
	require.NoError(t, err)
	require.Len(t, all.Data, 3)
	_, err = b.svc.ListMessages(ctx, b.owner, inbound.ListMessagesInput{ID: src.ID, State: "lost"})
	requireKind(t, err, domain.KindValidation)

	detail, err := b.svc.GetMessage(ctx, b.owner, inbound.MessageInput{ID: src.ID, MessageID: dead[1]})
	require.NoError(t, err)
	require.Equal(t, `{"m":"m2"}`, detail.Body)
	require.Equal(t, "utf-8", detail.BodyEncoding)
	require.Equal(t, "/admin/tasks?job="+strconv.FormatInt(*detail.JobID, 10), *detail.TaskURL)
}

func TestPurgeInboxDeletesProcessedMessagesPastTheRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := &failing{resultFunc: func(m inbound.Message) error {
		if m.MessageID == "bad" {
			return inbound.Permanent(errors.New("bad product code"))
		}
		return nil
	}}
	b := setup(t, inbound.Route{Name: "double", Kind: inbound.AnyKind, Handler: h})
	src, key := b.swSource(t)
	day := 24 * time.Hour
	old := b.accept(t, key, src.ID, "old", `{"m":"old"}`)
	require.Equal(t, inbound.OutcomeDone, b.process(t, old, inbound.Job{Attempt: 1, MaxAttempts: 5}).Kind)
	dead := b.accept(t, key, src.ID, "bad", `{"m":"bad"}`)
	require.Equal(t, inbound.OutcomeDead, b.process(t, dead, inbound.Job{Attempt: 1, MaxAttempts: 5}).Kind)
	waiting := b.accept(t, key, src.ID, "waiting", `{"m":"waiting"}`)
	b.clock.Advance(29 * day)
	recent := b.accept(t, key, src.ID, "recent", `{"m":"recent"}`)
	require.Equal(t, inbound.OutcomeDone, b.process(t, recent, inbound.Job{Attempt: 1, MaxAttempts: 5}).Kind)
	b.clock.Advance(2 * day)

	keys, n, err := b.svc.Maintain(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "only the message processed 31 days ago")
	require.Positive(t, keys, "the replay keys of the 31-day-old messages expired too")
	_, ok := b.mem.Message(old)
	require.False(t, ok)
	for _, id := range []uuid.UUID{dead, waiting, recent} {
		_, ok := b.mem.Message(id)
		require.True(t, ok, "dead letters, unprocessed and recent messages stay")
	}
	// Past the retention its id deduplicates no more: a sender that sends
	// it again has it processed again.
	require.NotEqual(t, old, b.accept(t, key, src.ID, "old", `{"m":"old"}`))

	// A shorter retention, as STANDMEET_EVENT_RETENTION sets it.
	short := inbound.NewService(inbound.ServiceDeps{UoW: b.mem, Verifiers: b.verReg, Seal: fakeBox{}.Seal, Clock: b.clock, Retention: day})
	n, err = short.PurgeInbox(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "the message processed 2 days ago")
	_, ok = b.mem.Message(recent)
	require.False(t, ok)
}

func TestPurgeInboxReportsAStoreFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the store refuses to start a transaction
	_, err := b.svc.PurgeInbox(ctx)
	require.ErrorContains(t, err, "purge processed inbound messages")
	require.ErrorIs(t, err, context.Canceled)
	_, _, err = b.svc.Maintain(ctx)
	require.ErrorIs(t, err, context.Canceled)
}
