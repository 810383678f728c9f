// Package config reads the StandMeet server's configuration from the
// environment and validates it at start, so a missing or malformed value stops
// the process with one clear line naming the variable.
package config

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"

	"github.com/standmeet/standmeet/internal/infra/httpx"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is the validated configuration.
type Config struct {
	// DatabaseURL is DATABASE_URL.
	DatabaseURL string
	// Addr is STANDMEET_ADDR, default 127.0.0.1:8080.
	Addr string
	// MasterKey is the 32-byte master key from STANDMEET_MASTER_KEY or the
	// file named by STANDMEET_MASTER_KEY_FILE.
	MasterKey []byte
	// OldMasterKeys are previous master keys still accepted for opening
	// (STANDMEET_MASTER_KEY_OLD, comma-separated base64), for rotation.
	OldMasterKeys [][]byte
	// EgressAllow is STANDMEET_EGRESS_ALLOW: prefixes the outbound client may
	// reach although they are private or loopback.
	EgressAllow []netip.Prefix
	// TrustedProxies is STANDMEET_TRUSTED_PROXIES: the reverse proxies whose
	// X-Forwarded-For and X-Forwarded-Proto are believed (client address
	// for rate limits and IP bans, HTTPS for cookies). Empty: the client is
	// the TCP peer.
	TrustedProxies []netip.Prefix
	// LogFormat is STANDMEET_LOG: "json" (default) or "console".
	LogFormat string
	// EventRetention is STANDMEET_EVENT_RETENTION, default 30 days.
	EventRetention time.Duration
	// DBMaxConns is STANDMEET_DB_MAX_CONNS, the connection pool size
	// (default 40): River's workers, the relay and HTTP share it.
	DBMaxConns int
	// River tuning: STANDMEET_RIVER_MAX_WORKERS (default 200),
	// STANDMEET_RIVER_FETCH_COOLDOWN (default 10ms),
	// STANDMEET_RIVER_FETCH_POLL_INTERVAL (default 250ms: every queue's
	// look for the jobs no insert notification announces),
	// STANDMEET_RIVER_RESCUE_AFTER (default 2m).
	RiverMaxWorkers        int
	RiverFetchCooldown     time.Duration
	RiverFetchPollInterval time.Duration
	RiverRescueAfter       time.Duration
	// WebhookBackoffScale divides the outbound retry schedule
	// (STANDMEET_WEBHOOK_BACKOFF_SCALE, default 1): fault tests compress hours
	// into seconds through configuration instead of waiting.
	WebhookBackoffScale float64
	// WebhookLanes is STANDMEET_WEBHOOK_LANES (default true): each process
	// works a River queue of its own, its delivery lane, and the fan-out
	// puts each endpoint's deliveries on one process's lane. False puts
	// every delivery on the shared webhooks queue, worked by every process.
	WebhookLanes bool
	// WebhookMaxEndpoints is the soft limit of webhook endpoints per owner
	// (STANDMEET_WEBHOOK_MAX_ENDPOINTS, default 50).
	WebhookMaxEndpoints int
	// PublishRate and PublishBytesRate limit events.publish per API key
	// (or per owner for a session), per process: events per second
	// (STANDMEET_PUBLISH_RATE, default 200) and bytes of data per second
	// (STANDMEET_PUBLISH_BYTES_RATE, default 1048576). A key may burst one
	// second's worth, and always at least one full batch.
	PublishRate      int
	PublishBytesRate int
	// DebugAddr is STANDMEET_DEBUG_ADDR: when set, a loopback host:port that
	// serves Go's profiler (/debug/pprof/) for measuring the server under
	// load. Empty (the default) serves nothing.
	DebugAddr string
	// MetricsAddr is STANDMEET_METRICS_ADDR: when set, a host:port of its
	// own that serves /metrics to anyone who reaches it (a private network
	// Prometheus scrapes), and the public listener serves no /metrics.
	// Empty (the default): the public listener serves /metrics to an
	// operator's credentials only.
	MetricsAddr string
}

// RiverJobTimeout is River's default job timeout, which the server keeps
// (job kinds that need less set their own): the rescue interval must not be
// shorter.
const RiverJobTimeout = time.Minute

// Getenv looks a variable up; os.Getenv in production, a map in tests.
type Getenv func(string) string

// Error names the variable at fault.
type Error struct {
	Var    string
	Reason string
}

// Error implements error: one line naming the variable.
func (e *Error) Error() string {
	// Driver errors span lines; the contract is one line.
	reason := strings.Join(strings.Fields(e.Reason), " ")
	return fmt.Sprintf("config: %s: %s", e.Var, reason)
}

// FromEnv reads the process environment.
func FromEnv() (Config, error) { return Load(os.Getenv, true) }

// Load reads and validates the configuration. When needDatabase is false
// (commands that do not touch the database) DATABASE_URL may be empty.
func Load(getenv Getenv, needDatabase bool) (Config, error) {
	c := Config{
		DatabaseURL:            strings.TrimSpace(getenv("DATABASE_URL")),
		Addr:                   orDefault(getenv("STANDMEET_ADDR"), "127.0.0.1:8080"),
		LogFormat:              orDefault(getenv("STANDMEET_LOG"), "json"),
		EventRetention:         30 * 24 * time.Hour,
		DBMaxConns:             40,
		RiverMaxWorkers:        200,
		RiverFetchCooldown:     10 * time.Millisecond,
		RiverFetchPollInterval: 250 * time.Millisecond,
		RiverRescueAfter:       2 * time.Minute,
		WebhookBackoffScale:    1,
		WebhookLanes:           true,
		WebhookMaxEndpoints:    50,
		PublishRate:            200,
		PublishBytesRate:       1 << 20,
	}
	if needDatabase || c.DatabaseURL != "" {
		if err := checkDatabaseURL(c.DatabaseURL); err != nil {
			return c, err
		}
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return c, &Error{"STANDMEET_ADDR", fmt.Sprintf("want host:port, got %q", c.Addr)}
	}
	key, err := masterKey(getenv)
	if err != nil {
		return c, err
	}
	c.MasterKey = key
	if old := strings.TrimSpace(getenv("STANDMEET_MASTER_KEY_OLD")); old != "" {
		for _, part := range strings.Split(old, ",") {
			k, err := decodeKey(strings.TrimSpace(part))
			if err != nil {
				return c, &Error{"STANDMEET_MASTER_KEY_OLD", err.Error()}
			}
			c.OldMasterKeys = append(c.OldMasterKeys, k)
		}
	}
	if c.EgressAllow, err = httpx.ParseAllowList(getenv("STANDMEET_EGRESS_ALLOW")); err != nil {
		return c, &Error{"STANDMEET_EGRESS_ALLOW", err.Error()}
	}
	if c.TrustedProxies, err = httpx.ParseAllowList(getenv("STANDMEET_TRUSTED_PROXIES")); err != nil {
		return c, &Error{"STANDMEET_TRUSTED_PROXIES", err.Error()}
	}
	if c.LogFormat != "json" && c.LogFormat != "console" {
		return c, &Error{"STANDMEET_LOG", fmt.Sprintf("want json or console, got %q", c.LogFormat)}
	}
	if v := getenv("STANDMEET_EVENT_RETENTION"); v != "" {
		d, err := parseDays(v)
		if err != nil || d <= 0 {
			return c, &Error{"STANDMEET_EVENT_RETENTION", fmt.Sprintf("want a positive duration such as 30d or 720h, got %q", v)}
		}
		c.EventRetention = d
	}
	if v := getenv("STANDMEET_DB_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 4 || n > 1000 {
			return c, &Error{"STANDMEET_DB_MAX_CONNS", fmt.Sprintf("want 4..1000, got %q", v)}
		}
		c.DBMaxConns = n
	}
	if v := getenv("STANDMEET_RIVER_MAX_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return c, &Error{"STANDMEET_RIVER_MAX_WORKERS", fmt.Sprintf("want 1..10000, got %q", v)}
		}
		c.RiverMaxWorkers = n
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{
		{"STANDMEET_RIVER_FETCH_COOLDOWN", &c.RiverFetchCooldown},
		{"STANDMEET_RIVER_FETCH_POLL_INTERVAL", &c.RiverFetchPollInterval},
		{"STANDMEET_RIVER_RESCUE_AFTER", &c.RiverRescueAfter},
	} {
		if v := getenv(d.name); v != "" {
			parsed, err := time.ParseDuration(v)
			if err != nil || parsed <= 0 {
				return c, &Error{d.name, fmt.Sprintf("want a positive duration such as 50ms, got %q", v)}
			}
			*d.dst = parsed
		}
	}
	// River refuses a poll more frequent than its fetch cooldown: say so
	// here, in one line, rather than fail in River.
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"STANDMEET_RIVER_FETCH_POLL_INTERVAL", c.RiverFetchPollInterval},
	} {
		if d.v < c.RiverFetchCooldown {
			return c, &Error{d.name, fmt.Sprintf("must be at least STANDMEET_RIVER_FETCH_COOLDOWN (%s), got %s", c.RiverFetchCooldown, d.v)}
		}
	}
	// River refuses a rescue interval shorter than its job timeout (1 minute
	// by default): say so here, in one line, rather than fail in River.
	if c.RiverRescueAfter < RiverJobTimeout {
		return c, &Error{"STANDMEET_RIVER_RESCUE_AFTER", fmt.Sprintf("must be at least River's job timeout (%s), got %s", RiverJobTimeout, c.RiverRescueAfter)}
	}
	if v := getenv("STANDMEET_WEBHOOK_MAX_ENDPOINTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100000 {
			return c, &Error{"STANDMEET_WEBHOOK_MAX_ENDPOINTS", fmt.Sprintf("want 1..100000, got %q", v)}
		}
		c.WebhookMaxEndpoints = n
	}
	for _, lim := range []struct {
		name string
		dst  *int
		max  int
	}{{"STANDMEET_PUBLISH_RATE", &c.PublishRate, 1_000_000}, {"STANDMEET_PUBLISH_BYTES_RATE", &c.PublishBytesRate, 1 << 30}} {
		if v := getenv(lim.name); v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 || n > lim.max {
				return c, &Error{lim.name, fmt.Sprintf("want 1..%d, got %q", lim.max, v)}
			}
			*lim.dst = n
		}
	}
	if v := strings.TrimSpace(getenv("STANDMEET_DEBUG_ADDR")); v != "" {
		host, _, err := net.SplitHostPort(v)
		ip, perr := netip.ParseAddr(host)
		if err != nil || perr != nil || !ip.IsLoopback() {
			// The profiler exposes memory contents: never off the machine.
			return c, &Error{"STANDMEET_DEBUG_ADDR", fmt.Sprintf("want a loopback host:port such as 127.0.0.1:6060, got %q", v)}
		}
		c.DebugAddr = v
	}
	if v := strings.TrimSpace(getenv("STANDMEET_METRICS_ADDR")); v != "" {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return c, &Error{"STANDMEET_METRICS_ADDR", fmt.Sprintf("want host:port such as 10.0.0.5:9090, got %q", v)}
		}
		if v == c.Addr {
			return c, &Error{"STANDMEET_METRICS_ADDR", "must differ from STANDMEET_ADDR: the public listener never serves /metrics without credentials"}
		}
		c.MetricsAddr = v
	}
	if v := getenv("STANDMEET_WEBHOOK_BACKOFF_SCALE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1 {
			return c, &Error{"STANDMEET_WEBHOOK_BACKOFF_SCALE", fmt.Sprintf("want a number >= 1, got %q", v)}
		}
		c.WebhookBackoffScale = f
	}
	if v := strings.TrimSpace(getenv("STANDMEET_WEBHOOK_LANES")); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, &Error{"STANDMEET_WEBHOOK_LANES", fmt.Sprintf("want true or false, got %q", v)}
		}
		c.WebhookLanes = b
	}
	return c, nil
}

func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return strings.TrimSpace(v)
}

func checkDatabaseURL(u string) error {
	if u == "" {
		return &Error{"DATABASE_URL", "not set (make run starts a private cluster and sets it for you)"}
	}
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "postgres" && parsed.Scheme != "postgresql") || parsed.Host == "" {
		return &Error{"DATABASE_URL", "want postgres://user@host:port/dbname"}
	}
	return nil
}

func masterKey(getenv Getenv) ([]byte, error) {
	inline, file := strings.TrimSpace(getenv("STANDMEET_MASTER_KEY")), strings.TrimSpace(getenv("STANDMEET_MASTER_KEY_FILE"))
	switch {
	case inline != "" && file != "":
		return nil, &Error{"STANDMEET_MASTER_KEY", "set either STANDMEET_MASTER_KEY or STANDMEET_MASTER_KEY_FILE, not both"}
	case inline != "":
		k, err := decodeKey(inline)
		if err != nil {
			return nil, &Error{"STANDMEET_MASTER_KEY", err.Error()}
		}
		return k, nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, &Error{"STANDMEET_MASTER_KEY_FILE", fmt.Sprintf("cannot read %s: %v", file, err)}
		}
		k, err := decodeKey(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, &Error{"STANDMEET_MASTER_KEY_FILE", err.Error()}
		}
		return k, nil
	default:
		return nil, &Error{"STANDMEET_MASTER_KEY", "not set: give base64 of 32 random bytes (or STANDMEET_MASTER_KEY_FILE); make run creates a dev key"}
	}
}

func decodeKey(s string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not valid base64")
	}
	if len(k) != 32 {
		return nil, fmt.Errorf("want base64 of 32 bytes, got %d bytes", len(k))
	}
	return k, nil
}

// parseDays accepts Go durations plus a "d" suffix for days.
func parseDays(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if strings.HasSuffix(v, "d") {
		n, err := strconv.Atoi(strings.TrimSuffix(v, "d"))
		if err != nil {
			return 0, err
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(v)
}
