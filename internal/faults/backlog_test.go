package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/bench"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
	"github.com/standmeet/standmeet/internal/testdb"
)

// maxGap is the longest pause between two receipts a draining backlog may
// show.
const maxGap = 2 * time.Second

// webhooksQueue pauses and resumes River's webhooks queue and every
// process's delivery lane (webhooks_…) of the fleet's database (as an
// operator would from River UI), so a backlog builds before it drains.
func webhooksQueue(t *testing.T, f *fleet) (pause, resume func()) {
	t.Helper()
	c, err := river.NewClient(riverpgxv5.New(f.Pool), &river.Config{})
	require.NoError(t, err)
	ctx := context.Background()
	var names []string
	return func() {
			queues, err := c.QueueList(ctx, river.NewQueueListParams().First(10000))
			require.NoError(t, err)
			names = []string{"webhooks"}
			for _, q := range queues.Queues {
				if strings.HasPrefix(q.Name, "webhooks_") {
					names = append(names, q.Name)
				}
			}
			for _, n := range names {
				require.NoError(t, c.QueuePause(ctx, n, nil))
			}
		}, func() {
			for _, n := range names {
				require.NoError(t, c.QueueResume(ctx, n, nil))
			}
		}
}

// waitQueued waits until n deliveries to the endpoint exist.
func waitQueued(t *testing.T, f *fleet, endpointID string, n int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		queued := 0
		for _, j := range mustListJobs(t, f.Pool, river.NewJobListParams().Kinds(delivery.KindDeliver)) {
			ref, err := refOf(j)
			require.NoError(t, err)
			if ref.EndpointID.String() == endpointID {
				queued++
			}
		}
		if queued >= n {
			return
		}
		require.True(t, time.Now().Before(deadline), "only %d of %d deliveries queued", queued, n)
		time.Sleep(200 * time.Millisecond)
	}
}

// endpointDeliveryStates counts the endpoint's delivery jobs by state,
// through River's client.
func endpointDeliveryStates(t *testing.T, f *fleet, endpointID string) map[rivertype.JobState]int {
	t.Helper()
	out := map[rivertype.JobState]int{}
	for _, j := range mustListJobs(t, f.Pool, river.NewJobListParams().Kinds(delivery.KindDeliver).States(rivertype.JobStates()...)) {
		ref, err := refOf(j)
		require.NoError(t, err)
		if ref.EndpointID.String() == endpointID {
			out[j.State]++
		}
	}
	return out
}

// endpointDeliveryPlaces counts the endpoint's deliveries by their River
// queue and the process (River client) that ran them last.
func endpointDeliveryPlaces(t *testing.T, f *fleet, endpointID string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, j := range mustListJobs(t, f.Pool, river.NewJobListParams().Kinds(delivery.KindDeliver).States(rivertype.JobStates()...)) {
		ref, err := refOf(j)
		require.NoError(t, err)
		if ref.EndpointID.String() != endpointID {
			continue
		}
		by := "-"
		if len(j.AttemptedBy) > 0 {
			by = j.AttemptedBy[len(j.AttemptedBy)-1]
		}
		out[j.Queue+" by "+by]++
	}
	return out
}

// gaps returns the longest pause between two consecutive receipts, where
// it began counted from the first receipt, and when it began.
func gaps(ars []bench.Arrival) (longest, at time.Duration, began time.Time) {
	times := make([]time.Time, len(ars))
	for i, a := range ars {
		times[i] = a.At
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	for i := 1; i < len(times); i++ {
		if g := times[i].Sub(times[i-1]); g > longest {
			longest, at, began = g, times[i-1].Sub(times[0]), times[i-1]
		}
	}
	return longest, at, began
}

// logStall logs what a stalled drain's pause waited on: the endpoint's
// deliveries that ended within a second of the pause (from paused, for
// pause) or snoozed at all, in the order they ended, with their times from
// resumed; the first and the last 30 when there are more than 60.
func logStall(t *testing.T, f *fleet, endpointID string, resumed, paused time.Time, pause time.Duration) {
	t.Helper()
	from, to := paused.Add(-time.Second), paused.Add(pause+time.Second)
	jobs := mustListJobs(t, f.Pool, river.NewJobListParams().Kinds(delivery.KindDeliver).States(rivertype.JobStates()...).First(10000))
	sort.SliceStable(jobs, func(i, j int) bool {
		a, b := jobs[i].FinalizedAt, jobs[j].FinalizedAt
		return a != nil && (b == nil || a.Before(*b))
	})
	since := func(at *time.Time) string {
		if at == nil {
			return "-"
		}
		return at.Sub(resumed).Round(time.Millisecond).String()
	}
	t.Logf("the pause began %s after the resume and lasted %s", since(&paused), pause.Round(time.Millisecond))
	// The runs around the pause, in the order they ended, and the snoozed
	// ones: the first and the last 30 of them, so the runs that ended the
	// pause are shown however many ended before it.
	type entry struct {
		j       *rivertype.JobRow
		snoozes int
	}
	var shown []entry
	for _, j := range jobs {
		ref, err := refOf(j)
		require.NoError(t, err)
		var md struct {
			Snoozes int `json:"snoozes"`
		}
		if len(j.Metadata) > 0 {
			require.NoError(t, json.Unmarshal(j.Metadata, &md))
		}
		ended := j.FinalizedAt != nil && j.FinalizedAt.After(from) && j.FinalizedAt.Before(to) ||
			j.AttemptedAt != nil && j.AttemptedAt.After(from) && j.AttemptedAt.Before(to)
		if ref.EndpointID.String() == endpointID && (ended || md.Snoozes > 0) {
			shown = append(shown, entry{j, md.Snoozes})
		}
	}
	if len(shown) > 60 {
		t.Logf("%d runs around the pause or snoozed; the first and the last 30:", len(shown))
		shown = append(shown[:30], shown[len(shown)-30:]...)
	}
	for _, e := range shown {
		j := e.j
		by := ""
		if len(j.AttemptedBy) > 0 {
			by = j.AttemptedBy[len(j.AttemptedBy)-1]
		}
		t.Logf("job %d %s on %s by %s, attempt %d, snoozes %d: attempted %s, finalized %s, scheduled %s",
			j.ID, j.State, j.Queue, by, j.Attempt, e.snoozes, since(j.AttemptedAt), since(j.FinalizedAt), since(&j.ScheduledAt))
	}
}

// TestFaultBacklogDrainsWithoutStalling: a backlog to one endpoint (10,000
// deliveries at full size) built while the webhooks queue is paused drains,
// once resumed, with no pause between receipts longer than maxGap — on one
// replica and on three — exactly once each and never two in flight. The
// backlog waits available in River's queues, none of it pending: River
// fetches it in order as the workers holding the endpoint's line free.
func TestFaultBacklogDrainsWithoutStalling(t *testing.T) {
	t.Parallel()
	n := size(300, 10000)
	for _, replicas := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d replicas", replicas), func(t *testing.T) {
			f := startFleet(t, testdb.NewURL(t), replicas, nil)
			a := f.owner(t)
			ep := a.endpoint(t, "backlog", nil)
			pause, resume := webhooksQueue(t, f)
			pause()
			writeNotes(t, a, "backlog", n)
			waitQueued(t, f, ep.ServerID, n, 2*time.Minute)
			states := endpointDeliveryStates(t, f, ep.ServerID)
			t.Logf("the endpoint's deliveries by state: %v", states)
			// A replica may run a few deliveries before River's pause reaches
			// it; those are finished, not waiting. Every other delivery waits
			// available, none pending.
			finished := states[rivertype.JobStateCompleted] + states[rivertype.JobStateCancelled] + states[rivertype.JobStateDiscarded]
			waiting := states[rivertype.JobStateAvailable] + states[rivertype.JobStateRunning] +
				states[rivertype.JobStateScheduled] + states[rivertype.JobStateRetryable]
			require.Equal(t, n, finished+waiting, "every delivery is counted once, none pending")
			require.Zero(t, states[rivertype.JobStatePending], "no delivery waits in River's pending state")
			start := time.Now()
			resume()
			tl := waitDelivered(t, f.Pool, []*tenant{a}, n, 5*time.Minute)
			elapsed := time.Since(start)
			longest, at, began := gaps(ep.Arrivals())
			t.Logf("%d replicas: %d deliveries drained in %s (%.0f/s); longest pause between receipts %s, %s in; %s",
				replicas, n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), longest.Round(time.Millisecond),
				at.Round(time.Millisecond), tl)
			t.Logf("deliveries by queue and process: %v", endpointDeliveryPlaces(t, f, ep.ServerID))
			if longest > maxGap {
				logStall(t, f, ep.ServerID, start, began, longest)
			}
			require.Zero(t, tl.Lost, "lost deliveries, e.g. %v", tl.LostSample)
			require.Zero(t, tl.Duplicates)
			require.LessOrEqual(t, tl.MaxInFlight, int64(1))
			require.LessOrEqual(t, longest, maxGap, "the drain stalled")
			requireNothingRunning(t, f.Pool, time.Minute)
		})
	}
}

// senderPID returns the pid of the process whose TCP connection to the
// sink at sinkAddr comes from remoteAddr (the request's RemoteAddr), among
// pids, by finding the socket's inode in /proc/net/tcp (local port the
// sender's, remote port the sink's: one local port may serve connections to
// several destinations) and then the process that holds it open.
func senderPID(remoteAddr, sinkAddr string, pids []int) (int, error) {
	port, err := portOf(remoteAddr)
	if err != nil {
		return 0, err
	}
	sinkPort, err := portOf(sinkAddr)
	if err != nil {
		return 0, err
	}
	inode := ""
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 {
				continue
			}
			_, local, ok1 := strings.Cut(fields[1], ":")
			_, remote, ok2 := strings.Cut(fields[2], ":")
			if !ok1 || !ok2 || fields[9] == "0" {
				continue
			}
			lp, err1 := strconv.ParseInt(local, 16, 32)
			rp, err2 := strconv.ParseInt(remote, 16, 32)
			if err1 == nil && err2 == nil && int(lp) == port && int(rp) == sinkPort {
				inode = fields[9]
			}
		}
		// Read-only: a failed close loses nothing that was read.
		_ = fh.Close()
		if inode != "" {
			break
		}
	}
	if inode == "" || inode == "0" {
		return 0, fmt.Errorf("no socket with local port %d", port)
	}
	want := "socket:[" + inode + "]"
	for _, pid := range pids {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name())); err == nil && link == want {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no replica holds socket %s", inode)
}

// portOf returns the port of a host:port address.
func portOf(addr string) (int, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}

// TestFaultKillLeaseHolder: while a backlog drains to one endpoint on two
// replicas, the replica whose request is in flight — the lease holder — is
// killed with SIGKILL. The endpoint is delivering again within the lease's
// TTL plus River's rescue time (the rescue interval and a leader election
// on top), its deliveries still queued are not left behind, every event arrives
// once or more (again only when its success was not recorded), and never
// two at once.
func TestFaultKillLeaseHolder(t *testing.T) {
	skipUnlessFull(t, "the killed holder's deliveries come back only after River's rescuer (a minute or more)")
	t.Parallel()
	rescue := rescueAfter()
	f := startFleet(t, testdb.NewURL(t), 2, map[string]string{
		"STANDMEET_RIVER_RESCUE_AFTER":    rescue.String(),
		"STANDMEET_WEBHOOK_BACKOFF_SCALE": "300",
	})
	a := f.owner(t)
	n := 1500
	const victim = 300
	var (
		mu       sync.Mutex
		caught   string
		released = make(chan struct{})
		once     sync.Once
	)
	ep := a.endpoint(t, "holder", func(w http.ResponseWriter, r *http.Request, i int64) {
		if i == victim {
			// Hold this request, the holder's, until its sender is dead.
			mu.Lock()
			caught = r.RemoteAddr
			mu.Unlock()
			select {
			case <-released:
			case <-r.Context().Done():
			}
			return
		}
		select {
		case <-time.After(time.Millisecond):
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	})
	pause, resume := webhooksQueue(t, f)
	pause()
	writeNotes(t, a, "holder", n)
	waitQueued(t, f, ep.ServerID, n, 2*time.Minute)
	resume()
	defer once.Do(func() { close(released) })

	var remote string
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		remote = caught
		return remote != ""
	}, 2*time.Minute, 10*time.Millisecond, "the victim request never came")
	var pids []int
	for _, s := range f.live() {
		pids = append(pids, s.Pid())
	}
	sinkURL, err := url.Parse(ep.URL)
	require.NoError(t, err)
	pid, err := senderPID(remote, sinkURL.Host, pids)
	require.NoError(t, err)
	killed := -1
	for i, s := range f.servers {
		if s != nil && s.Pid() == pid {
			killed = i
		}
	}
	require.NotEqual(t, -1, killed)
	before := ep.Requests()
	stopWatch := watchEndpoint(t, f.Pool, ep.ServerID)
	f.kill(killed)
	killedAt := time.Now()
	once.Do(func() { close(released) })

	// Delivering again: a receipt after the kill.
	limit := delivery.LeaseTTL + rescue + time.Minute
	require.Eventually(t, func() bool { return ep.Requests() > before }, limit, 20*time.Millisecond,
		"the endpoint did not deliver again within %s of killing its lease holder", limit)
	resumedAfter := time.Since(killedAt)
	stopWatch()
	tl := waitDelivered(t, f.Pool, []*tenant{a}, n, rescue+3*time.Minute)
	t.Logf("killed replica %d (pid %d) holding the lease after %d receipts; delivering again after %s; %s",
		killed, pid, before, resumedAfter.Round(time.Millisecond), tl)
	require.Zero(t, tl.Invalid)
	explainLost(t, f.Pool, tl)
	again, _ := explainDuplicates(t, f.Pool, []*tenant{a})
	require.Zero(t, tl.Lost, "lost deliveries, e.g. %v", tl.LostSample)
	require.Zero(t, again, "a delivery whose success was recorded is not posted again")
	require.LessOrEqual(t, tl.MaxInFlight, int64(1))
	// The endpoint's deliveries left available do not wait for River's
	// rescuer to return the runs that died with the process.
	require.Less(t, resumedAfter, rescue, "the endpoint waited for River's rescuer")
	requireNothingRunning(t, f.Pool, rescue+2*time.Minute)
}
