package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// BuildServer compiles ./cmd/server of the module rooted at root into
// dir/standmeet and returns the binary's path. The bench and the fault tests
// run the real binary as child processes, so a kill -9 kills a whole server.
func BuildServer(ctx context.Context, root, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "standmeet")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/server")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/server: %w\n%s", err, b)
	}
	return out, nil
}

// ModuleRoot returns the directory holding go.mod, searching upwards from the
// working directory (tests run in their package's folder).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// NewMasterKey returns base64 of 32 random bytes, a valid STANDMEET_MASTER_KEY.
func NewMasterKey() string {
	k := make([]byte, 32)
	rand.Read(k) // never fails: crypto/rand.Read crashes the program instead
	return base64.StdEncoding.EncodeToString(k)
}

// ServerOptions describe one server process.
type ServerOptions struct {
	// Binary is the standmeet executable.
	Binary string
	// DatabaseURL is the database every replica shares.
	DatabaseURL string
	// MasterKey is STANDMEET_MASTER_KEY (the same for every replica).
	MasterKey string
	// Env adds or overrides variables (STANDMEET_EGRESS_ALLOW,
	// STANDMEET_RIVER_*, STANDMEET_WEBHOOK_BACKOFF_SCALE, …).
	Env map[string]string
	// LogPath, when set, receives the process's output (appended, so a
	// restarted replica keeps one log).
	LogPath string
}

func (o ServerOptions) environ() []string {
	// The server's settings given to the bench go to its servers, so a
	// setting can be compared in bench runs (a profiler address: the first
	// server to bind it serves; the others log that it is taken and carry
	// on). What the bench sets itself overrides them.
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "STANDMEET_") && !strings.HasPrefix(k, "STANDMEET_BENCH_") {
			env[k] = v
		}
	}
	env["DATABASE_URL"] = o.DatabaseURL
	env["STANDMEET_MASTER_KEY"] = o.MasterKey
	env["STANDMEET_ADDR"] = "127.0.0.1:0"
	env["STANDMEET_LOG"] = "json"
	for k, v := range o.Env {
		env[k] = v
	}
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir()}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// Server is one running `standmeet serve` child process.
type Server struct {
	// URL is http://127.0.0.1:<port>, the port the process chose.
	URL string
	// metricsURL is the process's own /metrics listener
	// (STANDMEET_METRICS_ADDR), on a loopback port chosen here.
	metricsURL string
	opts       ServerOptions
	cmd        *exec.Cmd
	done       chan struct{}
	// exit is how the process ended (cmd.Wait), set before done closes.
	exit error
	log  io.Closer
	// logErr is the first write the log file refused.
	logMu  sync.Mutex
	logErr error
}

// refusedLog keeps the first error writing the log file.
func (s *Server) refusedLog(err error) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.logErr == nil {
		s.logErr = fmt.Errorf("write server log: %w", err)
	}
}

// closeLog closes the log file and returns what writing or closing it
// refused.
func (s *Server) closeLog() error {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return errors.Join(s.logErr, s.log.Close())
}

// signal sends sig; a process that has exited meanwhile is not an error,
// as done is what the caller waits for.
func (s *Server) signal(sig os.Signal) error {
	if err := s.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal server %d: %w", s.cmd.Process.Pid, err)
	}
	return nil
}

// StartServer starts `standmeet serve` on a loopback port of its choosing
// and returns once /readyz answers 200 (or within 60 s, an error). The
// process is killed if this process dies first (Pdeathsig).
func StartServer(ctx context.Context, opts ServerOptions) (*Server, error) {
	metricsAddr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	env := map[string]string{"STANDMEET_METRICS_ADDR": metricsAddr}
	for k, v := range opts.Env {
		env[k] = v
	}
	opts.Env = env
	cmd := exec.Command(opts.Binary, "serve")
	cmd.Env = opts.environ()
	// Its own process group: a Ctrl-C meant for the bench (or a signal to
	// its group) does not reach the server; Pdeathsig kills it if we die.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	var logw io.WriteCloser = nopWriteCloser{io.Discard}
	if opts.LogPath != "" {
		f, err := os.OpenFile(opts.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		logw = f
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		logw.Close()
		return nil, err
	}
	cmd.Stdout = logw
	if err := cmd.Start(); err != nil {
		logw.Close()
		return nil, fmt.Errorf("start %s serve: %w", opts.Binary, err)
	}
	s := &Server{opts: opts, cmd: cmd, done: make(chan struct{}), log: logw, metricsURL: "http://" + opts.Env["STANDMEET_METRICS_ADDR"]}
	addr := make(chan string, 1)
	var tail tailBuffer
	go func() {
		// The process logs `"msg":"serving","addr":"127.0.0.1:port"` once
		// it listens; everything is copied to the log file.
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		sent := false
		for sc.Scan() {
			line := sc.Bytes()
			// A line the log file refuses is lost to it only: the tail
			// below keeps the last lines for the errors this returns, and
			// Stop or Kill returns the refusal.
			if _, err := logw.Write(append(line, '\n')); err != nil {
				s.refusedLog(err)
			}
			tail.add(line)
			if !sent && bytes.Contains(line, []byte(`"msg":"serving"`)) {
				var m struct {
					Addr string `json:"addr"`
				}
				if json.Unmarshal(line, &m) == nil && m.Addr != "" {
					addr <- m.Addr
					sent = true
				}
			}
		}
	}()
	go func() {
		// Stop returns how the server ended; done says it has.
		s.exit = cmd.Wait()
		close(s.done)
	}()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	select {
	case a := <-addr:
		s.URL = "http://" + a
	case <-s.done:
		return nil, fmt.Errorf("server exited at start: %s", tail.String())
	case <-deadline.C:
		return nil, errors.Join(fmt.Errorf("server did not listen within 60 s: %s", tail.String()), s.Kill())
	case <-ctx.Done():
		return nil, errors.Join(ctx.Err(), s.Kill())
	}
	if err := waitReady(ctx, s.URL, 60*time.Second); err != nil {
		return nil, errors.Join(err, s.Kill())
	}
	return s, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// tailBuffer keeps the last lines of a process's output for error messages.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (t *tailBuffer) add(line []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, string(line))
	if len(t.lines) > 10 {
		t.lines = t.lines[1:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

func waitReady(ctx context.Context, base string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s/readyz not ready within %s (last: %v)", base, limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Pid returns the process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Alive reports whether the process is still running.
func (s *Server) Alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Kill sends SIGKILL (kill -9) and waits for the process to be gone: the
// replica gets no chance to finish or release anything.
// Its exit status only says it was killed, so it is not returned.
func (s *Server) Kill() error {
	var err error
	if s.Alive() {
		err = s.signal(syscall.SIGKILL)
	}
	<-s.done
	return errors.Join(err, s.closeLog())
}

// Stop sends SIGTERM and waits up to timeout for a graceful exit, then kills.
// A graceful exit has status 0; any other ending is returned.
func (s *Server) Stop(timeout time.Duration) error {
	var err error
	if s.Alive() {
		err = s.signal(syscall.SIGTERM)
	}
	select {
	case <-s.done:
		if s.exit != nil {
			err = errors.Join(err, fmt.Errorf("server %d ended: %w", s.cmd.Process.Pid, s.exit))
		}
		return errors.Join(err, s.closeLog())
	case <-time.After(timeout):
		return errors.Join(err, fmt.Errorf("server %d did not stop within %s", s.cmd.Process.Pid, timeout), s.Kill())
	}
}

// Restart starts a new process with the same options (a new port).
func (s *Server) Restart(ctx context.Context) (*Server, error) {
	return StartServer(ctx, s.opts)
}

// PeakRSS returns the process's peak resident set size in bytes (VmHWM of
// /proc/<pid>/status).
func (s *Server) PeakRSS() (int64, error) {
	return procStatusBytes(s.Pid(), "VmHWM:")
}

// RSS returns the current resident set size in bytes (VmRSS).
func (s *Server) RSS() (int64, error) {
	return procStatusBytes(s.Pid(), "VmRSS:")
}

func procStatusBytes(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, field) {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(line, field))
		if len(f) < 1 {
			break
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, err
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("%s not in /proc/%d/status", field, pid)
}

// freeLoopbackAddr returns a loopback host:port free a moment ago.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	return addr, nil
}

// Metric returns the value of an unlabelled sample (such as go_goroutines)
// from the server's /metrics, read on its own listener.
func (s *Server) Metric(ctx context.Context, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.metricsURL+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return parseMetric(resp.Body, name)
}

func parseMetric(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(rest), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("metric %s not found", name)
}

// RunCLI runs a standmeet subcommand with the server options' environment
// and returns its stdout.
func RunCLI(ctx context.Context, opts ServerOptions, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, opts.Binary, args...)
	cmd.Env = opts.environ()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("standmeet %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// NewOwner creates an owner through the CLI and issues an API key for it;
// it returns the key.
func NewOwner(ctx context.Context, opts ServerOptions, email string) (string, error) {
	pw := make([]byte, 18)
	rand.Read(pw) // never fails: crypto/rand.Read crashes the program instead
	if _, err := RunCLI(ctx, opts, base64.RawURLEncoding.EncodeToString(pw)+"\n", "owner", "create", "--email", email, "--password-stdin"); err != nil {
		return "", err
	}
	out, err := RunCLI(ctx, opts, "", "api-key", "issue", "--email", email, "--name", "bench")
	if err != nil {
		return "", err
	}
	key := strings.TrimSpace(out)
	if key == "" || strings.ContainsAny(key, " \n") {
		return "", fmt.Errorf("api-key issue printed %q, want only the key", out)
	}
	return key, nil
}
