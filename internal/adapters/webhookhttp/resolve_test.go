package webhookhttp

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// nxdomainResolver answers every question NXDOMAIN, in process (no DNS
// traffic leaves the test).
func nxdomainResolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			for {
				var l [2]byte
				if _, err := io.ReadFull(server, l[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(l[:]))
				if _, err := io.ReadFull(server, q); err != nil || len(q) < 12 {
					return
				}
				// The question ends after its name's root label and
				// QTYPE/QCLASS.
				end := 12
				for end < len(q) && q[end] != 0 {
					end += int(q[end]) + 1
				}
				end += 5
				if end > len(q) {
					return
				}
				resp := append([]byte{q[0], q[1], 0x81, 0x83, 0, 1, 0, 0, 0, 0, 0, 0}, q[12:end]...)
				binary.BigEndian.PutUint16(l[:], uint16(len(resp)))
				if _, err := server.Write(append(l[:], resp...)); err != nil {
					return
				}
			}
		}()
		return client, nil
	}}
}

// TestPosterNameThatDoesNotResolveIsAConnectionFailure: a registered name
// that does not resolve (now) is neither refused by the policy nor a
// timeout, so the delivery policy retries it as a connection failure whose
// reason (the resolver's "no such host") the delivery log shows.
func TestPosterNameThatDoesNotResolveIsAConnectionFailure(t *testing.T) {
	t.Parallel()
	_, err := post(t, New(Options{Resolver: nxdomainResolver()}), "https://hooks.no-such-name.test/h")
	require.Error(t, err)
	require.False(t, errors.Is(err, delivery.ErrBlocked), "not an egress refusal: %v", err)
	require.False(t, errors.Is(err, delivery.ErrTimeout), "not a timeout: %v", err)
	require.ErrorContains(t, err, "no such host")
}
