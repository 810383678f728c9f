package webhook_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

func TestValidateURLRefusesHostsNotWrittenCanonically(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url, says string
	}{
		{"http://127.1/h", "write 127.0.0.1"},
		{"http://2130706433/h", "write 127.0.0.1"},
		{"http://0x7f000001/h", "write 127.0.0.1"},
		{"http://0x7F000001/h", "write 127.0.0.1"},
		{"http://0177.0.0.1/h", "write 127.0.0.1"},
		{"http://127.0.0.01/h", "write 127.0.0.1"},
		{"http://127.000.000.001:8080/h", "write 127.0.0.1"},
		{"http://0x7f.1/h", "write 127.0.0.1"},
		{"http://10.0x10.1/h", "write 10.16.0.1"},
		{"http://192.168.257/h", "write 192.168.1.1"},
		{"http://127.0.0.1./h", "write 127.0.0.1"},
		{"http://3232235777/h", "write 192.168.1.1"},
		{"http://1.2.3.256/h", "neither a hostname"},
		{"http://4294967296/h", "neither a hostname"},
		{"http://foo.123/h", "neither a hostname"},
		{"http://-bad.example/h", "neither a hostname"},
		{"http://a..b/h", "neither a hostname"},
		{"http://bücher.example/h", "xn-- form"},
		{"http://[fe80::1%25eth0]/h", "zone"},
	}
	for _, c := range cases {
		_, err := webhook.ValidateURL(c.url)
		requireCode(t, err, webhook.CodeInvalidURL)
		require.ErrorContains(t, err, c.says, c.url)
		require.Equal(t, "url", domain.AsError(err).Field)
	}
	for _, ok := range []string{
		"https://hooks.example.com/x", "http://127.0.0.1:9/h", "http://[::1]:9/h", "https://[2001:db8::1]/h",
		"https://localhost/h", "https://my_host.internal./h", "https://xn--bcher-kva.example/h", "https://8.8.8.8/h",
		"https://0x.example/h", "https://1password.com/h",
	} {
		_, err := webhook.ValidateURL(ok)
		require.NoError(t, err, ok)
	}
}

// refuseInternal is an egress policy refusing loopback and 10/8 unless
// allowed, as httpx.CheckAddr with STANDMEET_EGRESS_ALLOW would.
func refuseInternal(allow ...string) webhook.EgressCheckFunc {
	return func(ip netip.Addr) error {
		for _, a := range allow {
			if netip.MustParsePrefix(a).Contains(ip.Unmap()) {
				return nil
			}
		}
		switch {
		case ip.Unmap().IsLoopback():
			return errors.New("loopback")
		case netip.MustParsePrefix("10.0.0.0/8").Contains(ip.Unmap()):
			return errors.New("private-use (10.0.0.0/8)")
		}
		return nil
	}
}

func TestCreateAndUpdateRefuseInternalLiteralsTheEgressPolicyRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		allow []string
		url   string
		ok    bool
	}{
		{"loopback", nil, "http://127.0.0.1:9/h", false},
		{"loopback v6", nil, "http://[::1]:9/h", false},
		{"mapped loopback", nil, "http://[::ffff:127.0.0.1]:9/h", false},
		{"localhost", nil, "http://localhost:9/h", false},
		{"a .localhost name", nil, "http://api.localhost:9/h", false},
		{"private", nil, "https://10.1.2.3/h", false},
		{"public", nil, "https://8.8.8.8/h", true},
		{"a name", nil, "https://hooks.example.com/h", true},
		{"allowed loopback", []string{"127.0.0.0/8", "::1/128"}, "http://127.0.0.1:9/h", true},
		{"allowed localhost", []string{"127.0.0.0/8", "::1/128"}, "http://localhost:9/h", true},
		{"allowed elsewhere only", []string{"127.0.0.0/8"}, "https://10.1.2.3/h", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setupService(t)
			b.svc.SetEgress(refuseInternal(c.allow...))
			_, err := b.svc.Create(context.Background(), b.owner, decode[webhook.CreateInput](t, `{"url":"`+c.url+`","event_types":["code.*"]}`))
			if c.ok {
				require.NoError(t, err)
				return
			}
			requireCode(t, err, webhook.CodeInvalidURL)
			require.ErrorContains(t, err, "STANDMEET_EGRESS_ALLOW")
			require.Empty(t, b.store.Endpoints())

			// Update: an endpoint at a public URL cannot be moved there.
			b.svc.SetEgress(refuseInternal())
			out, err := b.svc.Create(context.Background(), b.owner, decode[webhook.CreateInput](t, `{"url":"https://hooks.example.com/h","event_types":["code.*"]}`))
			require.NoError(t, err)
			b.svc.SetEgress(refuseInternal(c.allow...))
			_, err = b.svc.Update(context.Background(), b.owner, decode[webhook.UpdateInput](t, `{"id":"`+out.ID.String()+`","url":"`+c.url+`"}`))
			requireCode(t, err, webhook.CodeInvalidURL)
			require.ErrorContains(t, err, "STANDMEET_EGRESS_ALLOW")
			require.Equal(t, "https://hooks.example.com/h", stored(t, b.store, out.ID).URL)
		})
	}
}
