package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/bench"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/testdb"
)

// inboundSource is a source as created through the admin API.
type inboundSource struct {
	ID         string `json:"id"`
	Secret     string `json:"secret"`
	ReceiveURL string `json:"receive_url"`
	key        []byte
}

// createInboundSource creates a standard-webhooks source with extra fields
// merged into the body.
func createInboundSource(t *testing.T, ts *testServer, apiKey, extra string) inboundSource {
	t.Helper()
	body := `{"name":"e2e sender","verifier":"standard-webhooks"` + extra + `}`
	status, resp := ts.do(t, http.MethodPost, "/api/admin/inbound-sources", apiKey, body)
	require.Equal(t, http.StatusCreated, status, resp)
	var s inboundSource
	require.NoError(t, json.Unmarshal([]byte(resp), &s))
	require.Equal(t, "/hooks/"+s.ID, s.ReceiveURL)
	key, err := standardwebhooks.ParseSecret(s.Secret)
	require.NoError(t, err, "a generated whsec_ secret, shown once: %s", resp)
	s.key = key
	return s
}

// hookRequest builds a Standard Webhooks request to the source, signed
// with key at ts.
func hookRequest(t *testing.T, ts *testServer, src inboundSource, key []byte, id string, at time.Time, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+src.ReceiveURL, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(standardwebhooks.HeaderID, id)
	req.Header.Set(standardwebhooks.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderSignature, standardwebhooks.Sign(key, id, at, body))
	return req
}

func send(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// inboxStates counts a source's inbox rows per state and their attempts.
func inboxStates(t *testing.T, ts *testServer, sourceID string) (map[string]int, int) {
	t.Helper()
	rows, err := ts.App.Pool.Query(context.Background(), `SELECT state, count(*), coalesce(sum(attempts), 0)
		FROM inbound_messages WHERE source_id = $1 GROUP BY state`, sourceID)
	require.NoError(t, err)
	defer rows.Close()
	out, attempts := map[string]int{}, 0
	for rows.Next() {
		var state string
		var n, a int
		require.NoError(t, rows.Scan(&state, &n, &a))
		out[state], attempts = n, attempts+a
	}
	require.NoError(t, rows.Err())
	return out, attempts
}

// waitAllDone waits until the source's n messages are processed.
func waitAllDone(t *testing.T, ts *testServer, sourceID string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		states, _ := inboxStates(t, ts, sourceID)
		return states["done"] == n
	}, 60*time.Second, 20*time.Millisecond, "inbox never all done")
}

func TestInboundGatewayStatusesOnTheRealServer(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	_, key := ts.newOwner(t)
	src := createInboundSource(t, ts, key, `,"body_limit_bytes":1024`)
	c := &http.Client{Timeout: 30 * time.Second}
	now := time.Now()
	body := []byte(`{"type":"order.created","order":"o-1"}`)

	status, resp := send(t, c, hookRequest(t, ts, src, src.key, "msg_1", now, body))
	require.Equal(t, http.StatusAccepted, status, resp)
	require.Contains(t, resp, `"status":"accepted"`)
	status, resp = send(t, c, hookRequest(t, ts, src, src.key, "msg_1", now, body))
	require.Equal(t, http.StatusOK, status, resp)
	require.Contains(t, resp, `"status":"duplicate"`)

	other, err := standardwebhooks.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)
	cases := []struct {
		name     string
		req      func() *http.Request
		want     int
		wantCode string
	}{
		{"wrong secret", func() *http.Request { return hookRequest(t, ts, src, other, "msg_2", now, body) }, 401, "WEBHOOK_SIGNATURE_INVALID"},
		{"no signature", func() *http.Request {
			r := hookRequest(t, ts, src, src.key, "msg_2", now, body)
			r.Header.Del(standardwebhooks.HeaderSignature)
			return r
		}, 401, "WEBHOOK_SIGNATURE_INVALID"},
		{"stale", func() *http.Request { return hookRequest(t, ts, src, src.key, "msg_2", now.Add(-10*time.Minute), body) }, 400, "WEBHOOK_STALE"},
		{"malformed id", func() *http.Request { return hookRequest(t, ts, src, src.key, "a.b", now, body) }, 400, "WEBHOOK_MALFORMED"},
		{"unknown source", func() *http.Request {
			r := hookRequest(t, ts, src, src.key, "msg_2", now, body)
			r.URL.Path = "/hooks/" + uuid.NewString()
			return r
		}, 404, "INBOUND_SOURCE_NOT_FOUND"},
		{"over the source's body limit", func() *http.Request {
			return hookRequest(t, ts, src, src.key, "msg_2", now, bytes.Repeat([]byte("x"), 2048))
		}, 413, "PAYLOAD_TOO_LARGE"},
	}
	for _, tc := range cases {
		status, resp := send(t, c, tc.req())
		require.Equal(t, tc.want, status, "%s: %s", tc.name, resp)
		require.Equal(t, tc.wantCode, errCode(t, resp), tc.name)
	}

	status, resp = ts.do(t, http.MethodPatch, "/api/admin/inbound-sources/"+src.ID, key, `{"enabled":false}`)
	require.Equal(t, http.StatusOK, status, resp)
	status, resp = send(t, c, hookRequest(t, ts, src, src.key, "msg_3", now, body))
	require.Equal(t, http.StatusNotFound, status, "a disabled source: %s", resp)

	waitAllDone(t, ts, src.ID, 1)
	status, resp = ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+src.ID+"/messages", key, "")
	require.Equal(t, http.StatusOK, status, resp)
	var page struct {
		Data []struct {
			MessageID string  `json:"message_id"`
			State     string  `json:"state"`
			EventType string  `json:"event_type"`
			Attempts  int     `json:"attempts"`
			TaskURL   *string `json:"task_url"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &page))
	require.Len(t, page.Data, 1)
	require.Equal(t, "msg_1", page.Data[0].MessageID)
	require.Equal(t, "done", page.Data[0].State)
	require.Equal(t, "order.created", page.Data[0].EventType)
	require.Zero(t, page.Data[0].Attempts, "no route wants it: admitted done, never attempted")
	require.Nil(t, page.Data[0].TaskURL, "and no job to open")
	require.Nil(t, page.NextCursor)
	require.Zero(t, ts.Logs.FilterMessage("request failed").Len(), "no 500 on the way")
}

// TestInboundConcurrentDeliveriesAreAdmittedOnce sends 200 distinct
// messages 5 times each, all 1,000 at once: exactly one of each is
// accepted, the inbox holds 200 rows, each done as it was admitted (no route
// wants a message of a plain source), and River holds no processing job.
func TestInboundConcurrentDeliveriesAreAdmittedOnce(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	_, key := ts.newOwner(t)
	src := createInboundSource(t, ts, key, "")

	const messages, copies = 200, 5
	now := time.Now()
	reqs := make([]*http.Request, 0, messages*copies)
	for m := range messages {
		body := []byte(fmt.Sprintf(`{"type":"stock.changed","sku":"sku-%d"}`, m))
		for range copies {
			reqs = append(reqs, hookRequest(t, ts, src, src.key, fmt.Sprintf("msg_%03d", m), now, body))
		}
	}
	rand.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })

	c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: len(reqs), Proxy: nil}}
	defer c.CloseIdleConnections()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
		accepted = map[string]int{}
	)
	start := make(chan struct{})
	for _, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := c.Do(req)
			code := 0
			if err == nil {
				code = resp.StatusCode
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			statuses[code]++
			if code == http.StatusAccepted {
				accepted[req.Header.Get(standardwebhooks.HeaderID)]++
			}
		}()
	}
	close(start)
	wg.Wait()
	require.Equal(t, map[int]int{http.StatusAccepted: messages, http.StatusOK: messages * (copies - 1)}, statuses)
	require.Len(t, accepted, messages, "each message accepted exactly once")

	states, attempts := inboxStates(t, ts, src.ID)
	require.Equal(t, map[string]int{"done": messages}, states, "exactly 200 inbox rows, done when their 2xx left")
	require.Zero(t, attempts)
	require.Empty(t, listJobs(t, ts, jobsOfKind(riverjob.InboundProcessKind)), "no processing job")
}

// TestInboundOnlyMessagesARouteWantsQueueAJob: a message to a plain source
// is done as it is admitted, with no inbound.process job in River; once a
// supplier connection waits for its activation, the next message queues one
// job, which activates the connection; after that the source's messages are
// admitted done again.
func TestInboundOnlyMessagesARouteWantsQueueAJob(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	owner, key := ts.newOwner(t)
	src := createInboundSource(t, ts, key, "")
	c := &http.Client{Timeout: 30 * time.Second}
	accept := func(msgID string) uuid.UUID {
		t.Helper()
		status, resp := send(t, c, hookRequest(t, ts, src, src.key, msgID, time.Now(), []byte(`{"type":"hello"}`)))
		require.Equal(t, http.StatusAccepted, status, resp)
		var r struct {
			ID uuid.UUID `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(resp), &r))
		require.NotEqual(t, uuid.Nil, r.ID, resp)
		return r.ID
	}
	type message struct {
		Status       string     `json:"status"`
		StatusDetail string     `json:"status_detail"`
		Attempts     int        `json:"attempts"`
		ReceivedAt   time.Time  `json:"received_at"`
		DoneAt       *time.Time `json:"done_at"`
		JobID        *int64     `json:"job_id"`
	}
	get := func(id uuid.UUID) message {
		t.Helper()
		status, resp := ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+src.ID+"/messages/"+id.String(), key, "")
		require.Equal(t, http.StatusOK, status, resp)
		var m message
		require.NoError(t, json.Unmarshal([]byte(resp), &m))
		return m
	}
	jobsOf := func(id uuid.UUID) int {
		return len(listJobs(t, ts, jobsOfKind(riverjob.InboundProcessKind), func(r jobRef) bool { return r.MessageID == id }))
	}
	requireAdmittedDone := func(id uuid.UUID) {
		t.Helper()
		m := get(id)
		require.Equal(t, "done", m.Status)
		require.NotNil(t, m.DoneAt)
		require.True(t, m.ReceivedAt.Equal(*m.DoneAt), "processed when received")
		require.Equal(t, "processed at "+m.DoneAt.UTC().Format(time.RFC3339), m.StatusDetail)
		require.Zero(t, m.Attempts)
		require.Nil(t, m.JobID)
		require.Zero(t, jobsOf(id), "no inbound.process job")
	}

	plain := accept("plain-1")
	requireAdmittedDone(plain)
	var received int
	require.NoError(t, ts.App.Pool.QueryRow(t.Context(), `SELECT count(*) FROM events WHERE owner_id = $1 AND type = $2`,
		owner, domain.EventInboundMessageReceived).Scan(&received))
	require.Equal(t, 1, received, "its receipt is recorded all the same")

	status, resp := ts.do(t, http.MethodPost, "/api/admin/supplier-connections", key, `{"name":"Acme","source_id":"`+src.ID+`"}`)
	require.Equal(t, http.StatusCreated, status, resp)
	var conn struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &conn))
	wanted := accept("activates")
	require.Equal(t, 1, jobsOf(wanted), "the pending activation wants it: one job")
	waitAllDone(t, ts, src.ID, 2)
	m := get(wanted)
	require.Equal(t, 1, m.Attempts)
	require.NotNil(t, m.JobID)
	status, resp = ts.do(t, http.MethodGet, "/api/admin/supplier-connections/"+conn.ID, key, "")
	require.Equal(t, http.StatusOK, status, resp)
	require.Contains(t, resp, `"status":"active"`)

	requireAdmittedDone(accept("after-activation"))
	require.Len(t, listJobs(t, ts, jobsOfKind(riverjob.InboundProcessKind)), 1, "one job in all")
}

func TestInboundSupplierConnectionLifecycle(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	owner, key := ts.newOwner(t)
	src := createInboundSource(t, ts, key, "")
	status, resp := ts.do(t, http.MethodPost, "/api/admin/supplier-connections", key,
		`{"name":"Acme logistics","supplier":"acme","source_id":"`+src.ID+`"}`)
	require.Equal(t, http.StatusCreated, status, resp)
	var conn struct {
		ID         string `json:"id"`
		Status     string `json:"status"`
		ReceiveURL string `json:"receive_url"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &conn))
	require.Equal(t, "connected", conn.Status)
	require.Equal(t, src.ReceiveURL, conn.ReceiveURL)
	subject := "supplier://" + conn.ID
	eventsOf := func(typ string) int {
		var n int
		require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
			`SELECT count(*) FROM events WHERE owner_id = $1 AND type = $2 AND subject = $3`, owner, typ, subject).Scan(&n))
		return n
	}
	require.Equal(t, 1, eventsOf(domain.EventSupplierConnected))

	c := &http.Client{Timeout: 30 * time.Second}
	for i := range 2 {
		status, resp := send(t, c, hookRequest(t, ts, src, src.key, "first-"+strconv.Itoa(i), time.Now(), []byte(`{"type":"hello"}`)))
		require.Equal(t, http.StatusAccepted, status, resp)
	}
	waitAllDone(t, ts, src.ID, 2)
	require.Equal(t, 1, eventsOf(domain.EventSupplierActivated), "activated once, by the first verified message")
	status, resp = ts.do(t, http.MethodGet, "/api/admin/supplier-connections/"+conn.ID, key, "")
	require.Equal(t, http.StatusOK, status, resp)
	require.Contains(t, resp, `"status":"active"`)

	status, resp = ts.do(t, http.MethodDelete, "/api/admin/inbound-sources/"+src.ID, key, "")
	require.Equal(t, http.StatusConflict, status, resp)
	require.Equal(t, "INBOUND_SOURCE_IN_USE", errCode(t, resp))
	status, resp = ts.do(t, http.MethodDelete, "/api/admin/supplier-connections/"+conn.ID, key, "")
	require.Equal(t, http.StatusNoContent, status, resp)
	require.Equal(t, 1, eventsOf(domain.EventSupplierDisconnected))
	status, resp = ts.do(t, http.MethodDelete, "/api/admin/inbound-sources/"+src.ID, key, "")
	require.Equal(t, http.StatusNoContent, status, resp)
	status, _ = send(t, c, hookRequest(t, ts, src, src.key, "after", time.Now(), []byte(`{}`)))
	require.Equal(t, http.StatusNotFound, status)
}

// TestInboundDeadLetterReplayOnTheRealServer: dead letters are listed with
// their last error, and replaying them (one, then all) brings them back
// through the real worker to done. The dead rows are written directly: the
// real server's only handler does not fail on demand (the retry schedule
// with a failing handler double is tested against River in
// internal/adapters/riverjob).
func TestInboundDeadLetterReplayOnTheRealServer(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	owner, key := ts.newOwner(t)
	src := createInboundSource(t, ts, key, "")
	var dead []string
	for i := range 3 {
		id := uuid.Must(uuid.NewV7())
		_, err := ts.App.Pool.Exec(context.Background(), `INSERT INTO inbound_messages
			(id, owner_id, source_id, message_id, message_id_signed, payload_sha256, body, received_at, state, attempts, last_error, dead_at)
			VALUES ($1, $2, $3, $4, true, sha256($5::bytea), $5::bytea, now() + make_interval(secs => $6), 'dead', 5, 'supplier API 503', now())`,
			id, owner, src.ID, "dead-"+strconv.Itoa(i), []byte(`{"i":`+strconv.Itoa(i)+`}`), i)
		require.NoError(t, err)
		dead = append(dead, id.String())
	}
	status, resp := ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+src.ID+"/dead-letters?limit=2", key, "")
	require.Equal(t, http.StatusOK, status, resp)
	var page struct {
		Data []struct {
			ID        string `json:"id"`
			LastError string `json:"last_error"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &page))
	require.Len(t, page.Data, 2)
	require.Equal(t, dead[2], page.Data[0].ID, "newest first")
	require.Equal(t, "supplier API 503", page.Data[0].LastError)
	require.NotNil(t, page.NextCursor)

	status, resp = ts.do(t, http.MethodPost, "/api/admin/inbound-sources/"+src.ID+"/dead-letters/"+dead[0]+"/replay", key, `{"reset_attempts":false}`)
	require.Equal(t, http.StatusOK, status, resp)
	require.Contains(t, resp, `"state":"received"`)
	require.Contains(t, resp, `"attempts":5`)
	status, resp = ts.do(t, http.MethodPost, "/api/admin/inbound-sources/"+src.ID+"/dead-letters/replay", key, "")
	require.Equal(t, http.StatusOK, status, resp)
	require.JSONEq(t, `{"count":2}`, resp)

	waitAllDone(t, ts, src.ID, 3)
	states, attempts := inboxStates(t, ts, src.ID)
	require.Equal(t, map[string]int{"done": 3}, states)
	require.Equal(t, 6+2, attempts, "5+1 kept for the first, 1 each for the two reset")
	var maxAttempts []int
	for _, j := range listJobs(t, ts, jobsOfKind(riverjob.InboundProcessKind)) {
		maxAttempts = append(maxAttempts, j.MaxAttempts)
	}
	slices.Sort(maxAttempts)
	require.Equal(t, []int{1, 5, 5}, maxAttempts, "without a reset only the last attempt is left")
}

// TestInboundGatewayRandomInputs throws random headers and bodies at the
// real gateway and database: every answer is one of the contract's
// statuses, never a 500.
func TestInboundGatewayRandomInputs(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	_, key := ts.newOwner(t)
	src := createInboundSource(t, ts, key, `,"body_limit_bytes":4096`)
	c := &http.Client{Timeout: 30 * time.Second}
	rng := rand.New(rand.NewPCG(7, 11))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	allowed := map[int]bool{200: true, 202: true, 400: true, 401: true, 404: true, 409: true, 413: true}
	now := time.Now()
	for i := range 300 {
		body := randBytes(rng.IntN(6000))
		if rng.IntN(3) == 0 {
			body = []byte(`{"type":"` + strings.Repeat("t", rng.IntN(300)) + `"}`)
		}
		id := pick("m-"+strconv.Itoa(i), "m-1", "", "a.b", strings.Repeat("x", 300), "\u00e9", "m 1")
		req := hookRequest(t, ts, src, src.key, "placeholder", now, body)
		req.Header.Set(standardwebhooks.HeaderID, id)
		switch rng.IntN(6) {
		case 0: // correctly signed
			if id != "" {
				req.Header.Set(standardwebhooks.HeaderSignature, standardwebhooks.Sign(src.key, id, now, body))
			}
		case 1:
			req.Header.Set(standardwebhooks.HeaderTimestamp, pick("-1", "0", "+1", "1e9", "99999999999999999999", " 1", ""))
		case 2:
			req.Header.Set(standardwebhooks.HeaderSignature, pick("", "v1,", "v1,AAAA", strings.Repeat("v1,QUFB ", 50), "v2,x v1,y", "v1,"+strings.Repeat("/", rng.IntN(100))))
		case 3:
			req.Header.Add(standardwebhooks.HeaderID, "second")
		case 4:
			req.URL.Path = "/hooks/" + pick("x", uuid.NewString(), src.ID+"x", "00000000-0000-0000-0000-000000000000")
		}
		status, resp := send(t, c, req)
		require.True(t, allowed[status], "request %d: status %d: %s", i, status, resp)
	}
	require.Zero(t, ts.Logs.FilterMessage("request failed").Len(), "no 500s")
}

// TestInboundBench measures inbound accepted/s and latency at concurrency
// 32 (20,000 Standard-Webhooks-signed requests) against the real server,
// beside a bare single-row INSERT rate measured in the same run. It is a
// measurement, so it runs only when STANDMEET_INBOUND_BENCH is set:
//
//	STANDMEET_INBOUND_BENCH=1 go test -run TestInboundBench -v ./cmd/server
//
// Knobs: STANDMEET_INBOUND_BENCH_PAUSED=1 (intake alone, then the drain),
// STANDMEET_INBOUND_BENCH_CONNS=n (pool size), STANDMEET_RIVER_MAX_WORKERS=n.
func TestInboundBench(t *testing.T) {
	if os.Getenv("STANDMEET_INBOUND_BENCH") == "" {
		t.Skip("set STANDMEET_INBOUND_BENCH=1 to measure")
	}
	opts := testServerOptions{}
	if w := os.Getenv("STANDMEET_RIVER_MAX_WORKERS"); w != "" {
		opts.Env = map[string]string{"STANDMEET_RIVER_MAX_WORKERS": w}
	}
	if conns := os.Getenv("STANDMEET_INBOUND_BENCH_CONNS"); conns != "" {
		opts.DBURL = testdb.NewURL(t) + "&pool_max_conns=" + conns
	}
	ts := startTestServer(t, opts)
	_, key := ts.newOwner(t)
	src := createInboundSource(t, ts, key, "")
	// STANDMEET_INBOUND_BENCH_PAUSED=1 pauses processing while the requests
	// come in, to see the intake alone, then times the drain.
	paused := os.Getenv("STANDMEET_INBOUND_BENCH_PAUSED") != ""
	if paused {
		require.NoError(t, ts.App.Worker.QueuePause(context.Background(), riverjob.QueueInbound, nil))
	}
	res, err := bench.InboundLoad(context.Background(), bench.InboundLoadOptions{
		BaseURL: ts.URL, SourceID: src.ID, Secret: src.Secret, Requests: 20000, Concurrency: 32, Pool: ts.App.Pool,
	})
	require.NoError(t, err)
	st := ts.App.Pool.Stat()
	t.Logf("pool: max %d conns, %d acquires, %d had to wait, %s waiting in all", st.MaxConns(), st.AcquireCount(), st.EmptyAcquireCount(), st.AcquireDuration().Round(time.Millisecond))
	t.Logf("inbound: %d/%d accepted in %s at concurrency %d: %.0f accepted/s, p50 %s, p99 %s",
		res.Accepted, res.Requests, res.Elapsed.Round(time.Millisecond), res.Concurrency, res.AcceptedPerSec, res.P50.Round(10*time.Microsecond), res.P99.Round(10*time.Microsecond))
	t.Logf("ceiling: bare single-row INSERT at concurrency %d: %.0f/s (inbound is %.2f of it)",
		res.InsertConcurrency, res.InsertPerSec, res.AcceptedPerSec/res.InsertPerSec)
	if paused {
		start := time.Now()
		require.NoError(t, ts.App.Worker.QueueResume(context.Background(), riverjob.QueueInbound, nil))
		waitAllDone(t, ts, src.ID, res.Requests)
		t.Logf("processing drained %d messages at %.0f/s", res.Requests, float64(res.Requests)/time.Since(start).Seconds())
	}
	waitAllDone(t, ts, src.ID, res.Requests)
}

// TestInboundSourceChangesReachEveryReplicaWithinTheCacheBound: two
// replicas on one database. A replica keeps using a source as it read it
// for at most inbound.SourceCacheTTL: a source disabled through one replica
// is refused by the other once the bound has passed, and so is a body over
// a limit lowered through the first.
func TestInboundSourceChangesReachEveryReplicaWithinTheCacheBound(t *testing.T) {
	t.Parallel()
	// One master key for both, as replicas share it.
	env := map[string]string{"STANDMEET_MASTER_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))}
	a := startTestServer(t, testServerOptions{Env: env})
	b := startTestServer(t, testServerOptions{Env: env, DBURL: a.DBURL})
	_, apiKey := a.newOwner(t)
	src := createInboundSource(t, a, apiKey, "")
	c := &http.Client{Timeout: 30 * time.Second}
	body := []byte(`{"type":"order.created"}`)

	// Replica b reads the source and keeps it.
	status, resp := send(t, c, hookRequest(t, b, src, src.key, "msg_1", time.Now(), body))
	require.Equal(t, http.StatusAccepted, status, resp)

	// A smaller body limit, set through a, binds b within the bound.
	status, resp = a.do(t, http.MethodPatch, "/api/admin/inbound-sources/"+src.ID, apiKey, `{"body_limit_bytes":16}`)
	require.Equal(t, http.StatusOK, status, resp)
	time.Sleep(inbound.SourceCacheTTL)
	status, resp = send(t, c, hookRequest(t, b, src, src.key, "msg_2", time.Now(), body))
	require.Equal(t, http.StatusRequestEntityTooLarge, status, "b applies the new limit within %v: %s", inbound.SourceCacheTTL, resp)

	// Disabled through a: b refuses the next request after the bound.
	status, resp = a.do(t, http.MethodPatch, "/api/admin/inbound-sources/"+src.ID, apiKey, `{"enabled":false,"body_limit_bytes":1024}`)
	require.Equal(t, http.StatusOK, status, resp)
	status, resp = send(t, c, hookRequest(t, a, src, src.key, "msg_3", time.Now(), body))
	require.Equal(t, http.StatusNotFound, status, "the replica that made the change applies it at once: %s", resp)
	time.Sleep(inbound.SourceCacheTTL)
	status, resp = send(t, c, hookRequest(t, b, src, src.key, "msg_3", time.Now(), body))
	require.Equal(t, http.StatusNotFound, status, "b refuses a disabled source within %v: %s", inbound.SourceCacheTTL, resp)
}

// TestInboundRefusalsAreListedAndCounted: requests a source refuses (bad
// signature, stale, disabled) are listed for its owner with their reason,
// newest first and without bodies, and counted by reason on /metrics.
func TestInboundRefusalsAreListedAndCounted(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	_, key := ts.newOwner(t)
	_, otherKey := ts.newOwner(t)
	src := createInboundSource(t, ts, key, "")
	c := &http.Client{Timeout: 30 * time.Second}
	body := []byte(`{"type":"order.created","secret_stuff":"s3cr3t-body"}`)
	wrong, err := standardwebhooks.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)

	status, _ := send(t, c, hookRequest(t, ts, src, src.key, "ok_1", time.Now(), body))
	require.Equal(t, http.StatusAccepted, status)
	status, _ = send(t, c, hookRequest(t, ts, src, wrong, "bad_1", time.Now(), body))
	require.Equal(t, http.StatusUnauthorized, status)
	status, _ = send(t, c, hookRequest(t, ts, src, src.key, "stale_1", time.Now().Add(-time.Hour), body))
	require.Equal(t, http.StatusBadRequest, status)
	status, resp := ts.do(t, http.MethodPatch, "/api/admin/inbound-sources/"+src.ID, key, `{"enabled":false}`)
	require.Equal(t, http.StatusOK, status, resp)
	status, _ = send(t, c, hookRequest(t, ts, src, src.key, "off_1", time.Now(), body))
	require.Equal(t, http.StatusNotFound, status)

	type refusal struct {
		At             time.Time
		Reason, Detail string
	}
	var got struct{ Data []refusal }
	require.Eventually(t, func() bool {
		status, resp := ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+src.ID+"/refusals", key, "")
		require.Equal(t, http.StatusOK, status, resp)
		require.NotContains(t, resp, "s3cr3t-body", "no bodies")
		require.NoError(t, json.Unmarshal([]byte(resp), &got))
		return len(got.Data) == 3
	}, 10*time.Second, 100*time.Millisecond, "the refusals are written within a few seconds")
	reasons := []string{got.Data[0].Reason, got.Data[1].Reason, got.Data[2].Reason}
	require.Equal(t, []string{"INBOUND_SOURCE_DISABLED", "WEBHOOK_STALE", "WEBHOOK_SIGNATURE_INVALID"}, reasons, "newest first")

	status, _ = ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+src.ID+"/refusals", otherKey, "")
	require.Equal(t, http.StatusNotFound, status, "another owner's source")

	status, metrics := ts.do(t, http.MethodGet, "/metrics", ts.operatorKey(t), "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, metrics, `standmeet_inbound_refused_total{reason="WEBHOOK_SIGNATURE_INVALID"} 1`)
	require.Contains(t, metrics, `standmeet_inbound_refused_total{reason="WEBHOOK_STALE"} 1`)
	require.Contains(t, metrics, `standmeet_inbound_refused_total{reason="INBOUND_SOURCE_NOT_FOUND"} 1`)
}
