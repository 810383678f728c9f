package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/httpapi/hook"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/inboundtest"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

var now = time.Date(2026, 4, 5, 6, 7, 8, 0, time.UTC)

func identity(p, _ []byte) ([]byte, error) { return p, nil }

type testBundle struct {
	e      *echo.Echo
	mem    *inboundtest.Memory
	source uuid.UUID
	key    []byte
	reg    *prometheus.Registry
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	mem := inboundtest.NewMemory()
	vreg := verifier.NewDefaultRegistry()
	clock := domain.ClockFunc(func() time.Time { return now })
	svc := inbound.NewService(inbound.ServiceDeps{UoW: mem, Verifiers: vreg, Seal: identity, Clock: clock})
	src, err := svc.CreateSource(context.Background(), uuid.New(), inbound.CreateSourceInput{Name: "s", Verifier: verifier.KindStandardWebhooks, BodyLimitBytes: 256})
	require.NoError(t, err)
	key, err := standardwebhooks.ParseSecret(src.Secret)
	require.NoError(t, err)
	gw := inbound.NewGateway(inbound.GatewayDeps{Sources: mem, Inbox: mem, Verifiers: vreg, Unseal: identity, Clock: clock})
	reg := prometheus.NewRegistry()
	m, err := hook.New(gw, nil, reg)
	require.NoError(t, err)
	e := echo.New()
	m.Mount(e)
	return &testBundle{e: e, mem: mem, source: src.ID, key: key, reg: reg}
}

func (b *testBundle) post(path string, h http.Header, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	for k, vs := range h {
		req.Header[k] = vs
	}
	rec := httptest.NewRecorder()
	b.e.ServeHTTP(rec, req)
	return rec
}

func (b *testBundle) signedHeaders(id string, ts time.Time, body []byte) http.Header {
	h := http.Header{}
	h.Set(standardwebhooks.HeaderID, id)
	h.Set(standardwebhooks.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(standardwebhooks.HeaderSignature, standardwebhooks.Sign(b.key, id, ts, body))
	return h
}

func TestStatuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	path := "/hooks/" + b.source.String()
	body := []byte(`{"type":"a.b"}`)
	cases := []struct {
		name     string
		path     string
		headers  http.Header
		body     []byte
		want     int
		wantCode string
	}{
		{"accepted", path, b.signedHeaders("m1", now, body), body, http.StatusAccepted, ""},
		{"duplicate", path, b.signedHeaders("m1", now, body), body, http.StatusOK, ""},
		{"a stable id with another body", path, b.signedHeaders("m1", now, []byte(`{}`)), []byte(`{}`), http.StatusOK, ""},
		{"bad signature", path, b.signedHeaders("m2", now, body), []byte(`{"type":"x"}`), http.StatusUnauthorized, "WEBHOOK_SIGNATURE_INVALID"},
		{"no signature", path, without(b.signedHeaders("m2", now, body), standardwebhooks.HeaderSignature), body, http.StatusUnauthorized, "WEBHOOK_SIGNATURE_INVALID"},
		{"no id", path, without(b.signedHeaders("m2", now, body), standardwebhooks.HeaderID), body, http.StatusBadRequest, "WEBHOOK_MALFORMED"},
		{"stale", path, b.signedHeaders("m3", now.Add(-time.Hour), body), body, http.StatusBadRequest, "WEBHOOK_STALE"},
		{"unknown source", "/hooks/" + uuid.NewString(), b.signedHeaders("m4", now, body), body, http.StatusNotFound, "INBOUND_SOURCE_NOT_FOUND"},
		{"not an id", "/hooks/nope", b.signedHeaders("m4", now, body), body, http.StatusNotFound, "INBOUND_SOURCE_NOT_FOUND"},
		{"too large", path, b.signedHeaders("m5", now, bytes.Repeat([]byte("x"), 300)), bytes.Repeat([]byte("x"), 300), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE"},
	}
	for _, c := range cases { // in order: the duplicate follows the accept
		rec := b.post(c.path, c.headers, c.body)
		require.Equal(t, c.want, rec.Code, "%s: %s", c.name, rec.Body.String())
		if c.wantCode != "" {
			var eb struct {
				Error struct{ Code string } `json:"error"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb))
			require.Equal(t, c.wantCode, eb.Error.Code, c.name)
			continue
		}
		var a hook.Answer
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &a))
		require.Equal(t, "m1", a.MessageID)
		require.NotNil(t, a.ID)
	}
	require.Len(t, b.mem.Messages(), 1)
	require.InDelta(t, 1, counter(t, b.reg, "202"), 0)
	require.InDelta(t, 2, counter(t, b.reg, "404"), 0)
}

func without(h http.Header, name string) http.Header {
	h.Del(name)
	return h
}

// counter reads standmeet_inbound_requests_total for one status.
func counter(t *testing.T, reg *prometheus.Registry, status string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "standmeet_inbound_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "status" && l.GetValue() == status {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// FuzzHooks throws random headers, bodies and paths at the gateway: it must
// answer one of the contract's statuses, never a 500 or a panic, and a 2xx
// only for a message that is then in the inbox.
func FuzzHooks(f *testing.F) {
	b := setup(f)
	valid := []byte(`{"type":"order.created"}`)
	h := b.signedHeaders("msg_seed", now, valid)
	f.Add(b.source.String(), "webhook-id: msg_seed\nwebhook-timestamp: "+h.Get(standardwebhooks.HeaderTimestamp)+"\nwebhook-signature: "+h.Get(standardwebhooks.HeaderSignature), valid)
	f.Add(b.source.String(), "webhook-id: a.b\nwebhook-timestamp: +0001\nwebhook-signature: v1,AAAA v1a,zz v2,", []byte("{"))
	f.Add(b.source.String(), "webhook-id: x\nwebhook-id: y\nwebhook-timestamp: 99999999999999999999\nwebhook-signature: "+strings.Repeat("v1,QUFB ", 40), []byte{0, 0xff, 0xfe})
	f.Add("not-a-uuid", "", []byte(nil))
	f.Add(uuid.NewString(), "Content-Length: -1", bytes.Repeat([]byte("a"), 1000))
	allowed := map[int]bool{200: true, 202: true, 400: true, 401: true, 404: true, 409: true, 413: true}
	f.Fuzz(func(t *testing.T, source, rawHeaders string, body []byte) {
		headers := http.Header{}
		for _, line := range strings.Split(rawHeaders, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok {
				headers[http.CanonicalHeaderKey(strings.TrimSpace(k))] = append(headers[http.CanonicalHeaderKey(strings.TrimSpace(k))], strings.TrimSpace(v))
			}
		}
		rec := b.post("/hooks/"+url.PathEscape(source), headers, body)
		require.True(t, allowed[rec.Code], "status %d: %s", rec.Code, rec.Body.String())
		require.True(t, json.Valid(rec.Body.Bytes()), "answer is JSON")
		if rec.Code == http.StatusAccepted || rec.Code == http.StatusOK {
			var a hook.Answer
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &a))
			if a.ID != nil {
				_, ok := b.mem.Message(*a.ID)
				require.True(t, ok, "a 2xx answer means the message is in the inbox")
			}
		}
	})
}

// unreachable is a Receiver whose storage is down.
type unreachable struct{}

func (unreachable) Receive(context.Context, uuid.UUID, inbound.Request) (inbound.Receipt, error) {
	return inbound.Receipt{}, fmt.Errorf("store inbound message: %w: dial tcp 127.0.0.1:5432: connection refused", inbound.ErrUnavailable)
}

func TestUnreachableDatabaseIs503WithRetryAfter(t *testing.T) {
	t.Parallel()
	m, err := hook.New(unreachable{}, nil, nil)
	require.NoError(t, err)
	e := echo.New()
	m.Mount(e)
	req := httptest.NewRequest(http.MethodPost, "/hooks/"+uuid.NewString(), strings.NewReader(`{}`))
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, hook.RetryAfter, rec.Header().Get("Retry-After"))
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	require.Equal(t, "INBOUND_UNAVAILABLE", body.Error.Code)
}
