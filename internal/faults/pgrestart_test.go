package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/testdb"
)

// pgCluster is a private PostgreSQL cluster in a temporary directory, so a
// test may restart it without disturbing the shared development cluster
// every other test uses. As root it runs as the postgres user (initdb
// refuses root), as scripts/devdb.sh does.
type pgCluster struct {
	bin, dir string
	port     int
}

func pgBinDir(t *testing.T) string {
	t.Helper()
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); fileExists(filepath.Join(d, "initdb")) {
			return d
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if fileExists(filepath.Join(d, "initdb")) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	t.Skip("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// asPostgres runs a PostgreSQL binary, through runuser when we are root.
func (c *pgCluster) run(name string, args ...string) error {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func startPrivateCluster(t *testing.T) *pgCluster {
	t.Helper()
	c := &pgCluster{bin: pgBinDir(t)}
	dir, err := os.MkdirTemp("", "standmeet-faults-pg-")
	require.NoError(t, err)
	c.dir = dir
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("remove the cluster's directory: %v", err)
		}
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		require.NoError(t, err, "running as root needs the postgres user")
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		require.NoError(t, os.Chown(dir, uid, gid))
	}
	require.NoError(t, os.Chmod(dir, 0o700))
	require.NoError(t, c.run("initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c.port = ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	require.NoError(t, c.start())
	t.Cleanup(func() {
		if err := c.run("pg_ctl", "-D", filepath.Join(dir, "data"), "-m", "immediate", "-w", "stop"); err != nil {
			t.Logf("stop the private cluster: %v", err)
		}
	})
	return c
}

func (c *pgCluster) start() error {
	return c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "60", "start", "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off", c.port, c.dir))
}

// stop stops the server (fast: sessions are cut).
func (c *pgCluster) stop() error {
	return c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop")
}

// restart stops the server (fast: sessions are cut) and starts it again
// after pause, with the same port.
func (c *pgCluster) restart(pause time.Duration) error {
	if err := c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop"); err != nil {
		return err
	}
	time.Sleep(pause)
	return c.start()
}

func (c *pgCluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// database creates and migrates a database on the private cluster.
func (c *pgCluster) database(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.url("postgres"))
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	require.NoError(t, errors.Join(err, conn.Close(ctx)))
	u := c.url(name)
	require.NoError(t, testdb.MigrateURL(ctx, u))
	return u
}

// TestFaultPostgresRestart: PostgreSQL is restarted while W2 runs; the
// server processes reconnect by themselves (no restart of theirs), every
// event reaches every endpoint, nothing is left running.
func TestFaultPostgresRestart(t *testing.T) {
	skipUnlessFull(t, "restarting PostgreSQL needs a private cluster and may leave jobs for River's rescuer")
	t.Parallel()
	c := startPrivateCluster(t)
	dbURL := c.database(t, "faults")
	rescue := rescueAfter()
	f := startFleet(t, dbURL, 2, map[string]string{
		"STANDMEET_RIVER_RESCUE_AFTER":    rescue.String(),
		"STANDMEET_WEBHOOK_BACKOFF_SCALE": "300",
	})
	replicas := f.live()
	a := f.owner(t)
	endpoints, events := 50, 200
	eps := a.endpoints(t, "pg", endpoints, slowly(3*time.Millisecond))

	writeErr := make(chan error, 1)
	go func() { writeErr <- tryWriteNotes(a, "pg", events) }()
	// Restart once a part of the deliveries has arrived.
	deadline := time.Now().Add(time.Minute)
	for {
		var got int64
		for _, ep := range eps {
			got += ep.OK()
		}
		if got >= int64(endpoints*events/5) || time.Now().After(deadline) {
			t.Logf("restarting PostgreSQL with %d of %d deliveries made", got, endpoints*events)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, c.restart(2*time.Second))
	require.NoError(t, <-writeErr)

	tl := waitDelivered(t, f.Pool, []*tenant{a}, events, rescue+3*time.Minute)
	t.Logf("PostgreSQL restarted mid-W2, %d endpoints x %d events: %s", endpoints, events, tl)
	require.Zero(t, tl.Invalid, "every request must verify")
	explainLost(t, f.Pool, tl)
	require.Zero(t, tl.Lost, "lost deliveries, e.g. %v", tl.LostSample)
	require.LessOrEqual(t, tl.MaxInFlight, int64(1))
	for _, s := range replicas {
		require.True(t, s.Alive(), "a server process died with the database restart")
		resp, err := http.Get(s.URL + "/readyz")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "the server must be ready again by itself")
	}
	requireNothingRunning(t, f.Pool, rescue+2*time.Minute)
	t.Logf("job states at the end: %v", jobStates(t, f.Pool))
}
