// Command bench is `make bench`: it measures the StandMeet server on its own
// scratch database and prints every figure beside a ceiling measured in the
// same run, with the same River settings, and as a ratio to it. It writes
// bench/results.json, bench/results.md and bench/latency.svg.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/standmeet/standmeet/internal/bench"
)

func main() {
	out := flag.String("out", "bench", "directory for results.json, results.md and latency.svg")
	quick := flag.Bool("quick", false, "smaller workloads (a smoke run)")
	binary := flag.String("server", "", "the standmeet binary to run as child processes (empty: go build ./cmd/server into a temporary directory)")
	logs := flag.String("logs", filepath.Join(os.TempDir(), "standmeet-bench-logs"), "directory for the server processes' logs")
	budget := flag.Duration("budget", 12*time.Minute, "skip steps that would end past this much time (0: no bound)")
	fastDB := flag.Bool("fast-db", false, "the database runs without durability (make bench then uses the tests' cluster); without it a database with fsync, synchronous_commit or full_page_writes off is refused")
	only := flag.String("only", "", "comma-separated steps to run (relay, ceilings, w5, w1, w2, reasons, filters, w3, w4, w4events, memory, endpoints, replicas); empty: all")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()

	adminURL := os.Getenv("DATABASE_URL")
	if adminURL == "" {
		fmt.Fprintln(os.Stderr, "bench: DATABASE_URL is not set (make bench sets it to the private cluster)")
		os.Exit(1)
	}
	r := bench.NewReport()
	fmt.Printf("StandMeet bench on %s\n", r.Machine)
	durable, err := r.RecordSettings(ctx, adminURL, os.Environ())
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if !durable && !*fastDB {
		fmt.Fprintln(os.Stderr, "bench: the database runs with fsync, synchronous_commit or full_page_writes off; owners run with them on: use make bench's durable cluster, or pass -fast-db")
		os.Exit(1)
	}
	if durable {
		r.Note("database: durable (fsync, synchronous_commit and full_page_writes on)")
	} else {
		r.Note("database: not durable (-fast-db: fsync, synchronous_commit or full_page_writes off)")
	}
	steps := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			steps[s] = true
		}
	}
	fmt.Printf("server logs: %s\n", *logs)
	if err := bench.Run(ctx, bench.Options{AdminURL: adminURL, Quick: *quick, Binary: *binary, LogDir: *logs, Only: steps, Budget: *budget}, r); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		if err := r.Write(*out); err != nil {
			fmt.Fprintln(os.Stderr, "bench: write results:", err)
		}
		os.Exit(1)
	}
	if err := r.Write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "bench: write results:", err)
		os.Exit(1)
	}
	fmt.Println()
	r.Table(os.Stdout)
	fmt.Printf("\nwrote %s/results.json, %s/results.md, %s/latency.svg in %s\n", *out, *out, *out, time.Since(r.Started).Round(time.Second))
}
