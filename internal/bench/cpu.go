package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// CPUTime is the processor time (user and system) that the database's
// processes, the server processes and the whole machine had used by a
// snapshot. On a machine whose cores are all busy, a workload's rate is the
// machine's capacity divided by this time per unit, so the time per unit is
// the figure a change has to cut.
type CPUTime struct {
	// Postgres is every process named postgres on the machine: the private
	// cluster's backends, autovacuum and writers, and any other cluster's.
	Postgres time.Duration
	// Servers is the bench's server processes.
	Servers time.Duration
	// Busy and All are the machine's processor time spent busy and in all
	// (every core), from /proc/stat.
	Busy, All time.Duration
}

// Sub is the time used between an earlier snapshot o and c.
func (c CPUTime) Sub(o CPUTime) CPUTime {
	return CPUTime{Postgres: c.Postgres - o.Postgres, Servers: c.Servers - o.Servers, Busy: c.Busy - o.Busy, All: c.All - o.All}
}

// BusyShare is the share of the machine's processor time spent busy.
func (c CPUTime) BusyShare() float64 {
	return Ratio(float64(c.Busy), float64(c.All))
}

// clockTicks is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on
// every Linux architecture Go builds for).
const clockTicks = 100

// ReadCPUTime reads, from proc (/proc), the processor time used so far by
// the machine, the postgres processes and the processes servers; ok is
// false when proc cannot be listed or its stat read (not Linux). A process
// that ends between two snapshots takes its time with it, so a database
// connection closed during a step is counted short.
func ReadCPUTime(proc string, servers []int) (c CPUTime, ok bool) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return c, false
	}
	isServer := make(map[int]bool, len(servers))
	for _, pid := range servers {
		isServer[pid] = true
	}
	machine, err := os.ReadFile(filepath.Join(proc, "stat"))
	if err != nil {
		return c, false
	}
	if c.Busy, c.All, err = parseMachineStat(machine); err != nil {
		return c, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, used, err := procCPU(filepath.Join(proc, e.Name(), "stat"))
		if err != nil {
			// Gone since the listing, or not readable: not ours to count.
			continue
		}
		switch {
		case isServer[pid]:
			c.Servers += used
		case comm == "postgres":
			c.Postgres += used
		}
	}
	return c, true
}

// procCPU parses a /proc/<pid>/stat file: the command name and the user
// plus system time.
func procCPU(path string) (string, time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	return parseProcStat(b)
}

// parseProcStat parses the contents of /proc/<pid>/stat: "pid (comm) state
// ppid …", where comm may hold spaces and parentheses, and utime and stime
// are the 14th and 15th fields.
func parseProcStat(b []byte) (string, time.Duration, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", 0, fmt.Errorf("stat: no command name in %q", b)
	}
	comm := string(b[open+1 : end])
	// After ") " come the fields from the 3rd (state) on.
	f := bytes.Fields(b[end+1:])
	const utime, stime = 14 - 3, 15 - 3
	if len(f) <= stime {
		return "", 0, fmt.Errorf("stat of %s: %d fields after the name", comm, len(f))
	}
	var ticks uint64
	for _, i := range []int{utime, stime} {
		n, err := strconv.ParseUint(string(f[i]), 10, 63)
		if err != nil {
			return "", 0, fmt.Errorf("stat of %s: field %d: %w", comm, i+3, err)
		}
		ticks += n
	}
	return comm, time.Duration(ticks) * time.Second / clockTicks, nil
}

// parseMachineStat parses /proc/stat's first line, "cpu user nice system
// idle iowait irq softirq steal …", into the time spent busy (all but idle
// and iowait) and in all.
func parseMachineStat(b []byte) (busy, all time.Duration, err error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return 0, 0, fmt.Errorf("stat: no cpu line in %q", line)
	}
	var idle, total int64
	// Up to steal: guest and guest_nice, after it, are inside user and nice.
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("stat: cpu field %d: %w", i+1, err)
		}
		total += n
		if i == 3 || i == 4 {
			idle += n
		}
	}
	tick := time.Second / clockTicks
	return time.Duration(total-idle) * tick, time.Duration(total) * tick, nil
}

// serverPids is the process ids of the running servers.
func (b *ServerBench) serverPids() []int {
	pids := make([]int, len(b.Servers))
	for i, s := range b.Servers {
		pids[i] = s.Pid()
	}
	return pids
}
