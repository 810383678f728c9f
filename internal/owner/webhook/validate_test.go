package webhook

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	require.Error(t, err)
	de := domain.AsError(err)
	require.NotNil(t, de, "not a domain error: %v", err)
	require.Equal(t, code, de.Code, err.Error())
	require.Equal(t, domain.KindValidation, de.Kind)
}

func TestValidateURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string // "" = refused
	}{
		{"https://example.com/hooks", "https://example.com/hooks"},
		{"  http://example.com:8080/h?x=1  ", "http://example.com:8080/h?x=1"},
		{"http://127.0.0.1:9/loopback", "http://127.0.0.1:9/loopback"},
		{"https://[2001:db8::1]/h", "https://[2001:db8::1]/h"},
		{"", ""},
		{"example.com/hooks", ""},
		{"/relative", ""},
		{"ftp://example.com/h", ""},
		{"file:///etc/passwd", ""},
		{"javascript:alert(1)", ""},
		{"https://user:pass@example.com/h", ""},
		{"https://user@example.com/h", ""},
		{"https://example.com/h#frag", ""},
		{"https://example.com:0/h", ""},
		{"https://example.com:99999/h", ""},
		{"https:///nohost", ""},
		{"https://exa mple.com/", ""},
		{"https://example.com/\x00", ""},
		{"https://example.com/" + strings.Repeat("a", MaxURLLen), ""},
	}
	for _, c := range cases {
		got, err := ValidateURL(c.in)
		if c.want == "" {
			requireCode(t, err, CodeInvalidURL)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got)
	}
}

func TestValidateEventTypes(t *testing.T) {
	t.Parallel()
	got, err := ValidateEventTypes([]string{"corpus.*", "code.issued", " corpus.* ", "*"})
	require.NoError(t, err)
	require.Equal(t, []string{"corpus.*", "code.issued", "*"}, got, "trimmed, deduplicated, in order")
	for _, bad := range [][]string{
		nil,
		{},
		{""},
		{"nothing.*"},
		{"code.issued", "code.exploded"},
		{"Code.Issued"},
		{"code issued"},
		{strings.Repeat("a", MaxEventTypeLen+1)},
		make([]string, MaxEventTypes+1),
	} {
		_, err := ValidateEventTypes(bad)
		requireCode(t, err, CodeInvalidEventTypes)
	}
}

func TestParseHeaders(t *testing.T) {
	t.Parallel()
	ok := []struct {
		raw  string
		want map[string]string
	}{
		{``, map[string]string{}},
		{`null`, map[string]string{}},
		{`{}`, map[string]string{}},
		{`{"Authorization":"Bearer abc","X-Tenant":" t1 "}`, map[string]string{"Authorization": "Bearer abc", "X-Tenant": "t1"}},
		{`{"x-api-key":"k\tv"}`, map[string]string{"x-api-key": "k\tv"}},
	}
	for _, c := range ok {
		got, err := ParseHeaders(json.RawMessage(c.raw))
		require.NoError(t, err, c.raw)
		require.Equal(t, c.want, got)
	}
	bad := []string{
		`[]`,
		`"x"`,
		`{"X-A":1}`,
		`{"X-A":null}`,
		`{"X-A":{"b":"c"}}`,
		`{"":"v"}`,
		`{"X A":"v"}`,
		`{"X-A:":"v"}`,
		`{"webhook-id":"forged"}`,
		`{"Webhook-Signature":"v1,forged"}`,
		`{"Content-Type":"text/plain"}`,
		`{"content-length":"1"}`,
		`{"Host":"internal"}`,
		`{"User-Agent":"x"}`,
		`{"Transfer-Encoding":"chunked"}`,
		`{"Connection":"keep-alive"}`,
		`{"TE":"trailers"}`,
		`{"Upgrade":"h2c"}`,
		`{"X-A":"a\r\nInjected: yes"}`,
		`{"X-A":"a\u0000"}`,
		`{"X-A":"1","x-a":"2"}`,
		`{"X-A":"` + strings.Repeat("v", MaxHeaderValueLen+1) + `"}`,
		`{"` + strings.Repeat("n", MaxHeaderNameLen+1) + `":"v"}`,
	}
	for _, raw := range bad {
		_, err := ParseHeaders(json.RawMessage(raw))
		requireCode(t, err, CodeInvalidHeaders)
	}
	many := map[string]string{}
	for i := range MaxHeaders + 1 {
		many["X-"+strings.Repeat("h", i+1)] = "v"
	}
	_, err := ValidateHeaders(many)
	requireCode(t, err, CodeInvalidHeaders)
	big := map[string]string{}
	for i := range 10 {
		big["X-"+strings.Repeat("b", i+1)] = strings.Repeat("v", 1000)
	}
	_, err = ValidateHeaders(big)
	requireCode(t, err, CodeInvalidHeaders)
}

func TestValidateDescriptionAndMaxInFlight(t *testing.T) {
	t.Parallel()
	d, err := ValidateDescription("  orders  ")
	require.NoError(t, err)
	require.Equal(t, "orders", d)
	_, err = ValidateDescription(strings.Repeat("d", MaxDescriptionLen+1))
	requireCode(t, err, CodeInvalidDescription)
	_, err = ValidateDescription("a\x00b")
	requireCode(t, err, CodeInvalidDescription)
	require.NoError(t, ValidateMaxInFlight(1))
	require.NoError(t, ValidateMaxInFlight(MaxInFlightCap))
	requireCode(t, ValidateMaxInFlight(0), CodeInvalidMaxInFlight)
	requireCode(t, ValidateMaxInFlight(MaxInFlightCap+1), CodeInvalidMaxInFlight)
}

func FuzzValidateURL(f *testing.F) {
	f.Add("https://example.com/h")
	f.Add("http://u:p@127.0.0.1/")
	f.Add("https://[::1]:443/x?y#z")
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := ValidateURL(raw)
		if err != nil {
			if domain.AsError(err) == nil {
				t.Fatalf("%q: not a domain error: %v", raw, err)
			}
			return
		}
		u, perr := url.Parse(got)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Host == "" || len(got) > MaxURLLen {
			t.Fatalf("accepted a bad URL %q", got)
		}
	})
}

func FuzzParseHeaders(f *testing.F) {
	f.Add(`{"Authorization":"Bearer x"}`)
	f.Add(`{"webhook-id":"x"}`)
	f.Add(`{"X":"a\r\nb"}`)
	f.Fuzz(func(t *testing.T, raw string) {
		h, err := ParseHeaders(json.RawMessage(raw))
		if err != nil {
			return
		}
		if len(h) > MaxHeaders {
			t.Fatalf("%d headers accepted", len(h))
		}
		for k, v := range h {
			lk := strings.ToLower(k)
			if strings.HasPrefix(lk, "webhook-") || reservedHeaders[lk] || !isToken(k) {
				t.Fatalf("accepted header name %q", k)
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				t.Fatalf("accepted header value %q", v)
			}
		}
	})
}

func TestRateLimitResolvesAgainstTheCurrentLimit(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	cases := []struct {
		name                string
		rate, burst         *int
		curRate, curBurst   int
		wantRate, wantBurst int
		wantField           string
	}{
		{name: "none", wantRate: 0, wantBurst: 0},
		{name: "a rate, burst defaults to it", rate: n(5), wantRate: 5, wantBurst: 5},
		{name: "a rate and a burst", rate: n(5), burst: n(1), wantRate: 5, wantBurst: 1},
		{name: "0 removes the limit", rate: n(0), curRate: 5, curBurst: 2},
		{name: "a new burst keeps the rate", burst: n(3), curRate: 5, curBurst: 2, wantRate: 5, wantBurst: 3},
		{name: "a new rate keeps the burst", rate: n(10), curRate: 5, curBurst: 2, wantRate: 10, wantBurst: 2},
		{name: "absent keeps both", curRate: 5, curBurst: 2, wantRate: 5, wantBurst: 2},
		{name: "rate over the cap", rate: n(1001), wantField: "rate_limit_per_second"},
		{name: "negative rate", rate: n(-1), wantField: "rate_limit_per_second"},
		{name: "burst 0", rate: n(5), burst: n(0), wantField: "rate_limit_burst"},
		{name: "burst without a rate", burst: n(3), wantField: "rate_limit_burst"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, b, err := RateLimit(c.rate, c.burst, c.curRate, c.curBurst)
			if c.wantField != "" {
				de := domain.AsError(err)
				require.NotNil(t, de, "%v", err)
				require.Equal(t, CodeInvalidRateLimit, de.Code)
				require.Equal(t, c.wantField, de.Field)
				return
			}
			require.NoError(t, err)
			require.Equal(t, []int{c.wantRate, c.wantBurst}, []int{r, b})
		})
	}
}
