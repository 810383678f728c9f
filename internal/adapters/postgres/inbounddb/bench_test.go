package inbounddb_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

func identity(p, _ []byte) ([]byte, error) { return p, nil }

// TestGatewayReceiveRate is a measurement, run only with
// STANDMEET_INBOUND_BENCH set: the gateway's own rate on PostgreSQL.
func TestGatewayReceiveRate(t *testing.T) {
	if os.Getenv("STANDMEET_INBOUND_BENCH") == "" {
		t.Skip("set STANDMEET_INBOUND_BENCH=1 to measure")
	}
	ctx := context.Background()
	h, _ := newPostgresHarness(t)
	reg := verifier.NewDefaultRegistry()
	svc := inbound.NewService(inbound.ServiceDeps{UoW: h.uow, Verifiers: reg, Seal: identity})
	gw := inbound.NewGateway(inbound.GatewayDeps{Sources: h.lookup, Inbox: h.admit, Verifiers: reg, Unseal: identity})
	src, err := svc.CreateSource(ctx, h.newOwner(t), inbound.CreateSourceInput{Name: "b", Verifier: verifier.KindStandardWebhooks})
	require.NoError(t, err)
	key, err := standardwebhooks.ParseSecret(src.Secret)
	require.NoError(t, err)
	const n, workers = 5000, 32
	var next atomic.Int64
	next.Store(-1)
	done := make(chan struct{})
	start := time.Now()
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				i := next.Add(1)
				if i >= n {
					return
				}
				id := "m" + strconv.FormatInt(i, 10)
				body := []byte(`{"type":"x","i":` + strconv.FormatInt(i, 10) + `}`)
				now := time.Now()
				hd := domain.Header{}
				hd.Set(standardwebhooks.HeaderID, id)
				hd.Set(standardwebhooks.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
				hd.Set(standardwebhooks.HeaderSignature, standardwebhooks.Sign(key, id, now, body))
				if _, err := gw.Receive(ctx, src.ID, inbound.Request{Headers: hd, Body: bytes.NewReader(body), ContentLength: int64(len(body))}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range workers {
		<-done
	}
	t.Logf("gateway alone: %d messages in %s: %.0f/s", n, time.Since(start), float64(n)/time.Since(start).Seconds())
}
