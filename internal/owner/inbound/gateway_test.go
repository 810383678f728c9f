package inbound_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

func TestGatewayAcceptsThenAnswersDuplicate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, wantsAll())
	src, key := b.swSource(t)

	req := signed(key, "msg_1", b.clock.Now(), `{"type":"order.created","n":1}`)
	req.Headers.Set("Authorization", "Bearer not-for-handlers")
	r, err := b.gw.Receive(ctx, src.ID, req)
	require.NoError(t, err)
	require.Equal(t, inbound.Accepted, r.Status)
	require.Equal(t, "msg_1", r.MessageID)

	rec, ok := b.mem.Message(r.ID)
	require.True(t, ok)
	require.Equal(t, b.owner, rec.OwnerID)
	require.Equal(t, src.ID, rec.SourceID)
	require.Equal(t, inbound.StateReceived, rec.State)
	require.Equal(t, "order.created", rec.EventType)
	require.True(t, rec.MessageIDSigned)
	require.Equal(t, inbound.DigestOf([]byte(`{"type":"order.created","n":1}`)), rec.Digest)
	require.Equal(t, b.clock.Now().Unix(), rec.SignedAt.Unix())
	require.Empty(t, rec.Headers.Get("Authorization"), "credentials are not kept")
	require.Equal(t, "application/json", rec.Headers.Get("Content-Type"))
	jobs := b.mem.Jobs()
	require.Len(t, jobs, 1)
	require.Equal(t, r.ID, jobs[0].MessageID)
	require.Equal(t, 5, jobs[0].MaxAttempts)

	again, err := b.gw.Receive(ctx, src.ID, signed(key, "msg_1", b.clock.Now(), `{"type":"order.created","n":1}`))
	require.NoError(t, err)
	require.Equal(t, inbound.Duplicate, again.Status)
	require.Len(t, b.mem.Messages(), 1)
	require.Len(t, b.mem.Jobs(), 1, "a duplicate enqueues nothing")
}

// TestGatewayRefusesSameIDWithAnotherPayload: the generic hmac kind's id
// is whatever the sender puts in its id header, so a known id with another
// body is a conflict (409), before and after the replay key expires.
func TestGatewayRefusesSameIDWithAnotherPayload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, wantsAll())
	secret := "hmac-webhook-secret-0123456789"
	src, err := b.svc.CreateSource(ctx, b.owner, inbound.CreateSourceInput{Name: "generic", Verifier: verifier.KindHMAC, Secret: secret,
		Options: map[string]json.RawMessage{"signature_header": json.RawMessage(`"X-Signature"`), "payload": json.RawMessage(`"id.timestamp.body"`),
			"timestamp_header": json.RawMessage(`"X-Timestamp"`), "id_header": json.RawMessage(`"X-Id"`)}})
	require.NoError(t, err)
	req := func(id string, ts time.Time, body string) inbound.Request {
		rawTS := strconv.FormatInt(ts.Unix(), 10)
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(id + "." + rawTS + "." + body))
		h := domain.Header{}
		h.Set("X-Signature", hex.EncodeToString(m.Sum(nil)))
		h.Set("X-Timestamp", rawTS)
		h.Set("X-Id", id)
		return inbound.Request{Headers: h, Body: strings.NewReader(body), ContentLength: -1}
	}
	_, err = b.gw.Receive(ctx, src.ID, req("msg_1", b.clock.Now(), `{"n":1}`))
	require.NoError(t, err)

	_, err = b.gw.Receive(ctx, src.ID, req("msg_1", b.clock.Now(), `{"n":2}`))
	require.ErrorIs(t, err, inbound.ErrMessageConflict)
	requireKind(t, err, domain.KindConflict)
	require.Len(t, b.mem.Messages(), 1)
	require.Equal(t, inbound.DigestOf([]byte(`{"n":1}`)), b.mem.Messages()[0].Digest, "the first payload is kept")

	// After the replay key expired, the inbox's own uniqueness still holds.
	b.clock.Advance(time.Hour)
	later := b.clock.Now()
	_, err = b.gw.Receive(ctx, src.ID, req("msg_1", later, `{"n":2}`))
	require.ErrorIs(t, err, inbound.ErrMessageConflict)
	r, err := b.gw.Receive(ctx, src.ID, req("msg_1", later, `{"n":1}`))
	require.NoError(t, err)
	require.Equal(t, inbound.Duplicate, r.Status)
	require.Equal(t, b.mem.Messages()[0].ID, r.ID)
	require.Len(t, b.mem.Jobs(), 1)
}

// TestGatewayTakesAStableIDResentWithAnotherEncodingAsADuplicate: a
// Standard Webhooks webhook-id is the provider's own id of the event, so a
// resend that re-serialized the body is the same event: 200 duplicate, the
// first message kept, before and after the replay key expires.
func TestGatewayTakesAStableIDResentWithAnotherEncodingAsADuplicate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, wantsAll())
	src, key := b.swSource(t)
	first, err := b.gw.Receive(ctx, src.ID, signed(key, "msg_1", b.clock.Now(), `{"type":"a","n":1}`))
	require.NoError(t, err)
	for _, advance := range []time.Duration{time.Second, time.Hour} {
		b.clock.Advance(advance)
		again, err := b.gw.Receive(ctx, src.ID, signed(key, "msg_1", b.clock.Now(), "{\n  \"n\": 1,\n  \"type\": \"a\"\n}"))
		require.NoError(t, err)
		require.Equal(t, inbound.Duplicate, again.Status)
		require.Equal(t, first.ID, again.ID)
	}
	require.Len(t, b.mem.Messages(), 1)
	require.Equal(t, inbound.DigestOf([]byte(`{"type":"a","n":1}`)), b.mem.Messages()[0].Digest, "the first payload is kept")
	require.Len(t, b.mem.Jobs(), 1)
}

func TestGatewayStatuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	src, key := b.swSource(t, func(in *inbound.CreateSourceInput) { in.BodyLimitBytes = 64 })
	disabled, dkey := b.swSource(t, func(in *inbound.CreateSourceInput) { f := false; in.Enabled = &f })
	now := b.clock.Now()
	body := `{"ok":true}`
	big := `{"pad":"` + strings.Repeat("x", 80) + `"}`

	cases := []struct {
		name     string
		source   uuid.UUID
		req      func() inbound.Request
		wantKind domain.Kind
		wantErr  error
	}{
		{"unknown source", uuid.New(), func() inbound.Request { return signed(key, "a", now, body) }, domain.KindNotFound, inbound.ErrSourceNotFound},
		{"disabled source", disabled.ID, func() inbound.Request { return signed(dkey, "a", now, body) }, domain.KindNotFound, inbound.ErrSourceNotFound},
		{"declared length over the limit", src.ID, func() inbound.Request { return signed(key, "a", now, big) }, domain.KindTooLarge, inbound.ErrBodyTooLarge},
		{"streamed body over the limit", src.ID, func() inbound.Request {
			r := signed(key, "a", now, big)
			r.ContentLength = -1
			return r
		}, domain.KindTooLarge, inbound.ErrBodyTooLarge},
		{"unreadable body", src.ID, func() inbound.Request {
			r := signed(key, "a", now, body)
			r.Body, r.ContentLength = iotest.ErrReader(iotest.ErrTimeout), -1
			return r
		}, domain.KindValidation, inbound.ErrBodyUnreadable},
		{"wrong key", src.ID, func() inbound.Request { return signed(dkey, "a", now, body) }, domain.KindUnauthorized, verifier.ErrUnauthorized},
		{"altered body", src.ID, func() inbound.Request {
			r := signed(key, "a", now, body)
			r.Body = strings.NewReader(`{"ok":false}`)
			return r
		}, domain.KindUnauthorized, verifier.ErrUnauthorized},
		{"missing signature", src.ID, func() inbound.Request {
			r := signed(key, "a", now, body)
			r.Headers.Del(standardwebhooks.HeaderSignature)
			return r
		}, domain.KindUnauthorized, verifier.ErrUnauthorized},
		{"missing id", src.ID, func() inbound.Request {
			r := signed(key, "a", now, body)
			r.Headers.Del(standardwebhooks.HeaderID)
			return r
		}, domain.KindValidation, verifier.ErrMalformed},
		{"stale timestamp", src.ID, func() inbound.Request { return signed(key, "a", now.Add(-6*time.Minute), body) }, domain.KindValidation, verifier.ErrStale},
		{"future timestamp", src.ID, func() inbound.Request { return signed(key, "a", now.Add(6*time.Minute), body) }, domain.KindValidation, verifier.ErrStale},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := b.gw.Receive(ctx, c.source, c.req())
			requireKind(t, err, c.wantKind)
			require.ErrorIs(t, err, c.wantErr)
		})
	}
	require.Empty(t, b.mem.Messages(), "nothing refused reaches the inbox")
	require.Empty(t, b.mem.Jobs())
}

func TestGatewayDeduplicatesUnsignedIDsByBody(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, wantsAll())
	secret := "github-webhook-secret-0123456789"
	src, err := b.svc.CreateSource(ctx, b.owner, inbound.CreateSourceInput{Name: "gh", Verifier: verifier.KindGitHub, Secret: secret})
	require.NoError(t, err)
	require.Empty(t, src.Secret, "a pasted secret is never echoed")

	gh := func(delivery, body string) inbound.Request {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(body))
		h := domain.Header{}
		h.Set(verifier.HeaderGitHubSignature, "sha256="+hex.EncodeToString(m.Sum(nil)))
		h.Set(verifier.HeaderGitHubDelivery, delivery)
		h.Set(verifier.HeaderGitHubEvent, "push")
		return inbound.Request{Headers: h, Body: strings.NewReader(body), ContentLength: -1}
	}
	first, err := b.gw.Receive(ctx, src.ID, gh("d-1", `{"ref":"main"}`))
	require.NoError(t, err)
	require.Equal(t, inbound.Accepted, first.Status)
	rec, _ := b.mem.Message(first.ID)
	require.Equal(t, "push", rec.EventType)
	require.False(t, rec.MessageIDSigned)

	// A captured request resent under a fresh, unsigned delivery id.
	replayed, err := b.gw.Receive(ctx, src.ID, gh("d-forged", `{"ref":"main"}`))
	require.NoError(t, err)
	require.Equal(t, inbound.Duplicate, replayed.Status)
	require.Equal(t, first.ID, replayed.ID)

	other, err := b.gw.Receive(ctx, src.ID, gh("d-2", `{"ref":"dev"}`))
	require.NoError(t, err)
	require.Equal(t, inbound.Accepted, other.Status)
	require.Len(t, b.mem.Messages(), 2)
	require.Len(t, b.mem.Jobs(), 2)
}

func TestGatewayUnsealsWithTheSourceID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	src, key := b.swSource(t)
	other, _ := b.swSource(t)
	// Move the sealed secret onto another row: it must not open there.
	moved, err := b.mem.Lookup(ctx, other.ID)
	require.NoError(t, err)
	orig, err := b.mem.Lookup(ctx, src.ID)
	require.NoError(t, err)
	moved.SealedSecret = orig.SealedSecret
	b.mem.PutSource(moved)

	_, err = b.gw.Receive(ctx, other.ID, signed(key, "m", b.clock.Now(), `{}`))
	require.ErrorIs(t, err, errWrongAD)
	require.Nil(t, domain.AsError(err), "a storage failure is not the sender's fault (500)")
}

// countingAdmitter counts the batches the gateway writes.
type countingAdmitter struct {
	inbound.Admitter
	batches, largest atomic.Int64
}

func (c *countingAdmitter) Admit(ctx context.Context, batch []inbound.Admission, then inbound.AdmittedFunc) ([]inbound.Admitted, error) {
	c.batches.Add(1)
	for {
		l := c.largest.Load()
		if int64(len(batch)) <= l || c.largest.CompareAndSwap(l, int64(len(batch))) {
			break
		}
	}
	time.Sleep(2 * time.Millisecond) // a round trip, so requests pile up behind it
	return c.Admitter.Admit(ctx, batch, then)
}

func TestGatewayCommitsConcurrentRequestsTogether(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	src, key := b.swSource(t)
	counting := &countingAdmitter{Admitter: b.mem}
	gw := inbound.NewGateway(inbound.GatewayDeps{Sources: b.mem, Inbox: counting, Verifiers: b.verReg, Unseal: fakeBox{}.Open, Clock: b.clock})

	// 64 senders; each message is sent twice, the second time concurrently
	// with the first, so some pairs land in the same batch.
	const n = 400
	var wg sync.WaitGroup
	var accepted, duplicates atomic.Int64
	var ids sync.Map
	var next atomic.Int64
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= 2*n {
					return
				}
				msg := fmt.Sprintf("m%d", i/2)
				r, err := gw.Receive(ctx, src.ID, signed(key, msg, b.clock.Now(), `{"n":"`+msg+`"}`))
				if !assert.NoError(t, err) {
					return
				}
				if prev, loaded := ids.LoadOrStore(msg, r.ID); loaded {
					assert.Equal(t, prev, r.ID, "both answers name the same row")
				}
				switch r.Status {
				case inbound.Accepted:
					accepted.Add(1)
				case inbound.Duplicate:
					duplicates.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, n, accepted.Load(), "each message accepted once")
	require.EqualValues(t, n, duplicates.Load())
	require.Len(t, b.mem.Messages(), n)
	require.Len(t, b.mem.Jobs(), n, "one job per message")
	require.Greater(t, counting.largest.Load(), int64(1), "concurrent requests share a transaction")
	require.Less(t, counting.batches.Load(), int64(2*n), "fewer transactions than requests")
	t.Logf("%d requests in %d batches, the largest %d", 2*n, counting.batches.Load(), counting.largest.Load())
}

// countingLookup counts the source lookups the gateway makes.
type countingLookup struct {
	inbound.SourceLookup
	n atomic.Int64
}

func (c *countingLookup) Lookup(ctx context.Context, id uuid.UUID) (inbound.Source, error) {
	c.n.Add(1)
	time.Sleep(5 * time.Millisecond)
	return c.SourceLookup.Lookup(ctx, id)
}

func TestGatewayCachesSourcesForTheTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	src, key := b.swSource(t)
	lookups := &countingLookup{SourceLookup: b.mem}
	const ttl = 200 * time.Millisecond
	cache := inbound.NewSourceCache(ttl)
	gw := inbound.NewGateway(inbound.GatewayDeps{Sources: lookups, Inbox: b.mem, Cache: cache, Verifiers: b.verReg, Unseal: fakeBox{}.Open, Clock: b.clock})

	// Concurrent first requests share one lookup.
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := gw.Receive(ctx, src.ID, signed(key, fmt.Sprintf("c%d", i), b.clock.Now(), `{}`))
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	require.EqualValues(t, 1, lookups.n.Load(), "one lookup for concurrent requests")

	// A change made elsewhere (another replica: this cache is not told) is
	// seen once the entry is older than the TTL.
	off := false
	_, err := b.svc.UpdateSource(ctx, b.owner, inbound.UpdateSourceInput{ID: src.ID, Enabled: &off})
	require.NoError(t, err)
	time.Sleep(ttl)
	_, err = gw.Receive(ctx, src.ID, signed(key, "after", b.clock.Now(), `{}`))
	require.ErrorIs(t, err, inbound.ErrSourceNotFound)
	require.EqualValues(t, 2, lookups.n.Load())

	// Told (the same replica's service), the cache reads the source again
	// at once.
	on := true
	_, err = b.svc.UpdateSource(ctx, b.owner, inbound.UpdateSourceInput{ID: src.ID, Enabled: &on})
	require.NoError(t, err)
	cache.Forget(src.ID)
	_, err = gw.Receive(ctx, src.ID, signed(key, "again", b.clock.Now(), `{}`))
	require.NoError(t, err)
	require.EqualValues(t, 3, lookups.n.Load())

	// Unknown ids are cached too.
	unknown := uuid.New()
	for range 3 {
		_, err = gw.Receive(ctx, unknown, signed(key, "x", b.clock.Now(), `{}`))
		require.ErrorIs(t, err, inbound.ErrSourceNotFound)
	}
	require.EqualValues(t, 4, lookups.n.Load())
}
