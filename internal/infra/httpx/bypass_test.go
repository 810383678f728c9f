package httpx

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostClass says which resolvers answer a bypass form without sending a DNS
// query to the system's name server, which these tests must never do (it
// is not on loopback).
type hostClass int

const (
	// literalIP is an IP literal: no resolver is involved.
	literalIP hostClass = iota
	// hostsName is in /etc/hosts everywhere ("localhost"). With a trailing
	// dot it is not: both glibc and the Go resolver send "localhost." to DNS,
	// so that form is a stubName.
	hostsName
	// numericName is a non-canonical IPv4 form: glibc parses it (inet_aton),
	// the Go resolver finds no such host (after asking DNS).
	numericName
	// stubName is answered only by the test's stub DNS.
	stubName
)

type bypassCase struct {
	scheme string // "" means http
	host   string // as written in the URL, brackets included
	class  hostClass
}

// bypassCases are ways of writing "this host" that SSRF filters have missed.
// Every one must be refused at dial time, or fail to resolve, and never reach
// the loopback server.
func bypassCases() []bypassCase {
	return []bypassCase{
		{host: "127.0.0.1", class: literalIP},
		{scheme: "https", host: "127.0.0.1", class: literalIP},
		{host: "127.127.127.127", class: literalIP},
		{host: "127.255.255.254", class: literalIP},
		{host: "0.0.0.0", class: literalIP},
		{host: "[::1]", class: literalIP},
		{host: "[0:0:0:0:0:0:0:1]", class: literalIP},
		{host: "[::]", class: literalIP},
		{host: "[::ffff:127.0.0.1]", class: literalIP},
		{host: "[::FFFF:127.0.0.1]", class: literalIP},
		{host: "[::ffff:7f00:1]", class: literalIP},
		{host: "[0:0:0:0:0:ffff:127.0.0.1]", class: literalIP},
		{host: "[::ffff:0.0.0.0]", class: literalIP},
		{host: "[::127.0.0.1]", class: literalIP},

		{host: "2130706433", class: numericName},
		{host: "0x7f000001", class: numericName},
		{host: "0X7F000001", class: numericName},
		{host: "0x7f.0.0.1", class: numericName},
		{host: "0x7F.0x0.0x0.0x1", class: numericName},
		{host: "0x7f.1", class: numericName},
		{host: "0177.0.0.1", class: numericName},
		{host: "0177.0000.0000.0001", class: numericName},
		{host: "017700000001", class: numericName},
		{host: "127.1", class: numericName},
		{host: "127.0.1", class: numericName},
		{host: "127.000.000.001", class: numericName},
		{host: "0", class: numericName},

		{host: "localhost", class: hostsName},
		{host: "LOCALHOST", class: hostsName},
		{host: "LocalHost", class: hostsName},
		{scheme: "https", host: "localhost", class: hostsName},

		{host: "localhost.", class: stubName},
		{host: "LOCALHOST.", class: stubName},
		{host: "loopback.test", class: stubName},
		{host: "loopback6.test", class: stubName},
		{host: "mapped.test", class: stubName},
		{host: "unspecified.test", class: stubName},
		{host: "many.test", class: stubName},
		{host: "nat64.test", class: stubName},
		{host: "metadata.test", class: stubName},
		{host: "private.test", class: stubName},
		{host: "ula.test", class: stubName},
	}
}

// loadBypassStub fills a stub DNS with the stubName hosts of bypassCases.
// The non-loopback answers are safe: the policy refuses them in Control, and
// the dialLog fence would refuse them if it did not.
func loadBypassStub(s *stubDNS) {
	a := netip.MustParseAddr
	// As systemd-resolved and other RFC 6761 resolvers answer it.
	s.set("localhost.", a("127.0.0.1"), a("::1"))
	s.set("loopback.test", a("127.0.0.1"))
	s.set("loopback6.test", a("::1"))
	s.set("mapped.test", a("::ffff:127.0.0.1"))
	s.set("unspecified.test", a("0.0.0.0"))
	s.set("many.test", a("127.0.0.1"), a("127.0.0.2"), a("::1"))
	s.set("nat64.test", a("64:ff9b::7f00:1"))
	s.set("metadata.test", a("169.254.169.254"))
	s.set("private.test", a("10.0.0.1"))
	s.set("ula.test", a("fd00::1"))
}

// runBypass sends every bypass form of the given classes twice: through a
// guarded client, which must refuse it (or fail to resolve it) with no dial
// and no connection to the server; and, as a control, through an unguarded
// client, which must reach the dialer. The control shows that the refusal
// came from the policy and not from a malformed URL.
func runBypass(t *testing.T, resolver *net.Resolver, classes ...hostClass) {
	guarded := newTarget(t, "127.0.0.1:0", nil)
	control := newTarget(t, "127.0.0.1:0", nil)
	for _, tc := range bypassCases() {
		if !slices.Contains(classes, tc.class) {
			continue
		}
		scheme := tc.scheme
		if scheme == "" {
			scheme = "http"
		}
		t.Run(scheme+"://"+tc.host, func(t *testing.T) {
			t.Parallel()
			c, log := newTestClient(t, Options{BlockInternalEgress: true, Resolver: resolver, Timeout: 5 * time.Second})
			_, err := get(t, c, scheme+"://"+tc.host+":"+guarded.port()+"/")
			require.Error(t, err)

			var be *BlockedError
			var dnsErr *net.DNSError
			switch {
			case errors.As(err, &be):
				require.ErrorIs(t, err, ErrBlocked)
				t.Logf("refused: %v", be)
			case tc.class == numericName && errors.As(err, &dnsErr):
				t.Logf("unresolvable: %v", dnsErr)
			default:
				require.Failf(t, "not refused", "want *BlockedError, got %T: %v", err, err)
			}
			require.Empty(t, log.dials(), "the policy let a dial through")
			require.Zero(t, guarded.conns.Load(), "the loopback server accepted a connection")

			open, openLog := newTestClient(t, Options{Resolver: resolver, Timeout: 5 * time.Second})
			_, err = get(t, open, scheme+"://"+tc.host+":"+control.port()+"/")
			if errors.As(err, &dnsErr) {
				require.Equal(t, numericName, tc.class, "only numeric forms may fail to resolve")
				return
			}
			require.NotEmpty(t, openLog.dials(), "control: without the policy the form must reach the dialer (err %v)", err)
		})
	}
}

// TestBypassForms runs the bypass forms through the pure-Go resolver, with a
// stub DNS so that names it cannot parse get NXDOMAIN in-process.
func TestBypassForms(t *testing.T) {
	t.Parallel()
	stub := newStubDNS()
	loadBypassStub(stub)
	runBypass(t, stub.resolver(), literalIP, hostsName, numericName, stubName)
}

// childModeEnv selects the resolver mode of TestBypassFormsChild.
const childModeEnv = "HTTPX_TEST_BYPASS_CHILD"

// TestBypassFormsDefaultResolver re-runs the bypass forms in child processes
// with the default resolver forced by GODEBUG, which is read once per process:
// netdns=go and netdns=cgo (glibc parses "127.1" and friends itself). Each
// child runs only the forms its resolver answers without a DNS query.
func TestBypassFormsDefaultResolver(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name, godebug, wantOrder string
	}{
		{name: "go", godebug: "netdns=go+2", wantOrder: "hostLookupOrder(localhost) = files,dns"},
		{name: "cgo", godebug: "netdns=cgo+2", wantOrder: "hostLookupOrder(localhost) = cgo"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			if mode.name == "cgo" && !cgoResolver {
				t.Skip("this test binary has no cgo resolver (CGO_ENABLED=0 or netgo)")
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestBypassFormsChild$", "-test.v", "-test.count=1")
			godebug := mode.godebug
			if prev := os.Getenv("GODEBUG"); prev != "" {
				godebug = prev + "," + godebug
			}
			cmd.Env = append(os.Environ(), "GODEBUG="+godebug, childModeEnv+"="+mode.name)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			require.NoError(t, err, "child failed:\n%s\n%s", stdout.String(), stderr.String())
			require.Contains(t, stdout.String(), "--- PASS: TestBypassFormsChild", "child did not run:\n%s", stdout.String())
			// netdns=…+2 logs each lookup's resolver: prove the mode took effect.
			require.Contains(t, stderr.String(), mode.wantOrder)
			t.Logf("child (%s): %d forms refused, %d unresolvable",
				mode.name, strings.Count(stdout.String(), "refused: httpx:"), strings.Count(stdout.String(), "unresolvable: "))
		})
	}
}

// TestBypassFormsChild is the body of TestBypassFormsDefaultResolver's child
// processes; run directly it skips.
func TestBypassFormsChild(t *testing.T) {
	switch os.Getenv(childModeEnv) {
	case "go":
		// Numeric forms would make the Go resolver ask the system's name server.
		runBypass(t, nil, literalIP, hostsName)
	case "cgo":
		// Trailing-dot names would make glibc ask the system's name server.
		runBypass(t, nil, literalIP, hostsName, numericName)
	default:
		t.Skip("runs as a child of TestBypassFormsDefaultResolver")
	}
}
