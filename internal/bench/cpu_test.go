package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, stat, comm string
		used             time.Duration
		bad              bool
	}{
		{name: "a backend", stat: "4242 (postgres) S 1652 1652 1652 0 -1 4194560 900 0 0 0 150 25 0 0 20 0 1 0 5000 386332160 15089",
			comm: "postgres", used: 1750 * time.Millisecond},
		{name: "a name with spaces and parentheses", stat: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1",
			comm: "a (b) c", used: 70 * time.Millisecond},
		{name: "no name", stat: "7 postgres S 1", bad: true},
		{name: "cut short", stat: "7 (postgres) S 1 2 3", bad: true},
		{name: "not a number", stat: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 x 4 0 0 20 0 1 0 1 1 1", bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			comm, used, err := parseProcStat([]byte(c.stat))
			if c.bad {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.comm, comm)
			require.Equal(t, c.used, used)
		})
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (postgres) S 1652 1652 1652 0 -1 4194560 900 0 0 0 150 25 0 0 20 0 1 0 5000 386332160 15089"))
	f.Add([]byte("7 ()) R"))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, b []byte) {
		comm, used, err := parseProcStat(b)
		if err != nil {
			return
		}
		// What parses names the text between the first "(" and the last ")".
		require.Contains(t, string(b), "("+comm+")")
		require.GreaterOrEqual(t, used, time.Duration(0))
	})
}

func TestParseMachineStat(t *testing.T) {
	t.Parallel()
	busy, all, err := parseMachineStat([]byte("cpu  100 5 45 800 50 0 0 0 7 7\ncpu0 50 2 20 400 25 0 0 0 0 0\n"))
	require.NoError(t, err)
	// user+nice+system = 150 ticks busy; idle and iowait are not; guest is
	// inside user already.
	require.Equal(t, 1500*time.Millisecond, busy)
	require.Equal(t, 10*time.Second, all)
	_, _, err = parseMachineStat([]byte("intr 1 2 3\n"))
	require.Error(t, err)
}

// TestReadCPUTime reads a /proc laid out in a temporary directory: the
// postgres processes and the servers' are summed apart, every other process
// is left out, and a file that cannot be parsed is skipped.
func TestReadCPUTime(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(proc, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(proc, name), []byte(content), 0o644))
	}
	stat := func(pid, comm string, utime, stime string) string {
		return pid + " (" + comm + ") S 1 1 1 0 -1 0 0 0 0 0 " + utime + " " + stime + " 0 0 20 0 1 0 1 1 1"
	}
	write("stat", "cpu  300 0 100 600 0 0 0 0 0 0\n")
	write("10/stat", stat("10", "postgres", "100", "50"))
	write("11/stat", stat("11", "postgres", "30", "20"))
	write("20/stat", stat("20", "standmeet", "200", "0"))
	write("30/stat", stat("30", "bench", "999", "999"))
	write("40/stat", "garbage")
	write("self/stat", stat("1", "postgres", "999", "999"))

	c, ok := ReadCPUTime(proc, []int{20})
	require.True(t, ok)
	require.Equal(t, 2*time.Second, c.Postgres)
	require.Equal(t, 2*time.Second, c.Servers)
	require.InDelta(t, 0.4, c.BusyShare(), 1e-9)

	_, ok = ReadCPUTime(filepath.Join(proc, "absent"), nil)
	require.False(t, ok)
}

// TestServerEnvironment: the server's settings in the bench's environment
// reach the servers, the bench's own settings are not forwarded, and what
// the bench sets wins.
func TestServerEnvironment(t *testing.T) {
	t.Setenv("STANDMEET_RIVER_FETCH_COOLDOWN", "50ms")
	t.Setenv("STANDMEET_BENCH_STATEMENTS", "1")
	t.Setenv("STANDMEET_ADDR", "127.0.0.1:8080")
	t.Setenv("STANDMEET_EGRESS_ALLOW", "10.0.0.0/8")
	env := ServerOptions{DatabaseURL: "postgres://x", MasterKey: "k", Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8"}}.environ()
	require.Contains(t, env, "STANDMEET_RIVER_FETCH_COOLDOWN=50ms")
	require.Contains(t, env, "STANDMEET_ADDR=127.0.0.1:0")
	require.Contains(t, env, "STANDMEET_EGRESS_ALLOW=127.0.0.0/8")
	require.Contains(t, env, "DATABASE_URL=postgres://x")
	require.False(t, slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "STANDMEET_BENCH_") }), env)
}
