package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
)

// Figure is one measured figure beside its ceiling.
type Figure struct {
	// Key is the JSON key stem, e.g. "w1_deliveries_per_s".
	Key     string  `json:"key"`
	Label   string  `json:"label"`
	Unit    string  `json:"unit"`
	Value   float64 `json:"value"`
	Ceiling string  `json:"ceiling"`
	// CeilingValue is the ceiling measured in the same run.
	CeilingValue float64 `json:"ceiling_value"`
	// LowerIsBetter marks latencies: the ratio is then ceiling/value.
	LowerIsBetter bool `json:"lower_is_better"`
}

// Ratio is value/ceiling (or ceiling/value for latencies): 1 means at the
// ceiling.
func (f Figure) Ratio() float64 {
	if f.LowerIsBetter {
		return Ratio(f.CeilingValue, f.Value)
	}
	return Ratio(f.Value, f.CeilingValue)
}

// Report gathers the run's figures and extra facts.
type Report struct {
	Started time.Time
	Machine string
	Figures []Figure
	Extra   map[string]float64
	Notes   []string
	Series  []Series
	// Settings are what the run ran with: the database's durability
	// settings and the STANDMEET_* settings the servers inherit.
	Settings map[string]string
}

// NewReport starts a report.
func NewReport() *Report {
	host, _ := os.Hostname()
	return &Report{
		Started:  time.Now(),
		Machine:  fmt.Sprintf("%s, %d cores%s, %s/%s, %s", host, runtime.NumCPU(), cpuAndMemory(), runtime.GOOS, runtime.GOARCH, runtime.Version()),
		Extra:    map[string]float64{},
		Settings: map[string]string{},
	}
}

// Add records a figure and prints it at once.
func (r *Report) Add(f Figure) {
	r.Figures = append(r.Figures, f)
	fmt.Printf("  %-48s %12.1f %-6s ceiling %-40s %12.1f  ratio %.2f\n", f.Label, f.Value, f.Unit, f.Ceiling, f.CeilingValue, f.Ratio())
}

// Note records a line of context (also printed).
func (r *Report) Note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.Notes = append(r.Notes, s)
	fmt.Println("  " + s)
}

// JSON returns the flat results: for each figure <key>, <key>_ceiling and
// <key>_ratio, plus the extra facts, the machine and the notes.
func (r *Report) JSON() map[string]any {
	out := map[string]any{
		"machine":    r.Machine,
		"started":    r.Started.UTC().Format(time.RFC3339),
		"duration_s": time.Since(r.Started).Seconds(),
		"notes":      r.Notes,
		"settings":   r.Settings,
	}
	for _, f := range r.Figures {
		out[f.Key] = round(f.Value)
		out[f.Key+"_ceiling"] = round(f.CeilingValue)
		out[f.Key+"_ceiling_name"] = f.Ceiling
		out[f.Key+"_ratio"] = round(f.Ratio())
	}
	for k, v := range r.Extra {
		out[k] = round(v)
	}
	return out
}

func round(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// Table writes the figures as a Markdown table (for the README).
func (r *Report) Table(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "| figure\t| value\t| ceiling (same run)\t| ceiling value\t| ratio\t|")
	fmt.Fprintln(tw, "|---\t|---:\t|---\t|---:\t|---:\t|")
	for _, f := range r.Figures {
		fmt.Fprintf(tw, "| %s\t| %.1f %s\t| %s\t| %.1f %s\t| %.2f\t|\n", f.Label, f.Value, f.Unit, f.Ceiling, f.CeilingValue, f.Unit, f.Ratio())
	}
	keys := make([]string, 0, len(r.Extra))
	for k := range r.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tw.Flush()
	if len(keys) > 0 {
		fmt.Fprintln(w)
		for _, k := range keys {
			fmt.Fprintf(w, "- %s: %s\n", k, strings.TrimSuffix(fmt.Sprintf("%.3f", r.Extra[k]), ".000"))
		}
	}
}

// Write saves results.json, latency.svg and results.md under dir.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r.JSON(), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "latency.svg"), []byte(LatencySVG("StandMeet: latency distributions (make bench)", r.Series)), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "results.md"))
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "Machine: %s. Started %s.\n\n", r.Machine, r.Started.UTC().Format(time.RFC3339))
	if len(r.Settings) > 0 {
		keys := make([]string, 0, len(r.Settings))
		for k := range r.Settings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(f, "Settings:")
		for _, k := range keys {
			fmt.Fprintf(f, " %s=%s", k, r.Settings[k])
		}
		fmt.Fprintf(f, ".\n\n")
	}
	r.Table(f)
	if len(r.Notes) > 0 {
		fmt.Fprintln(f, "\nNotes:")
		for _, n := range r.Notes {
			fmt.Fprintf(f, "- %s\n", n)
		}
	}
	return nil
}

// cpuAndMemory describes the processor and memory from /proc (Linux), or
// says nothing elsewhere.
func cpuAndMemory() string {
	out := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				out += " (" + strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":")) + ")"
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				var kb int64
				if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb); err == nil {
					out += fmt.Sprintf(", %.0f GB RAM", float64(kb)/(1<<20))
				}
				break
			}
		}
	}
	return out
}

// RecordSettings reads the database's durability settings (fsync,
// synchronous_commit, full_page_writes) from adminURL's server and the
// STANDMEET_* variables of environ into the report, and returns whether the
// database is durable (all three on).
func (r *Report) RecordSettings(ctx context.Context, adminURL string, environ []string) (durable bool, err error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return false, fmt.Errorf("read the database's settings: %w", err)
	}
	defer conn.Close(ctx)
	durable = true
	for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			return false, fmt.Errorf("read %s: %w", name, err)
		}
		r.Settings["postgresql."+name] = v
		durable = durable && v == "on"
	}
	var version string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		return false, fmt.Errorf("read server_version: %w", err)
	}
	r.Settings["postgresql.version"] = version
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "STANDMEET_") {
			r.Settings[k] = v
		}
	}
	return durable, nil
}
