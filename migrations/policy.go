package migrations

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
)

var (
	createTable   = regexp.MustCompile(`(?i)^\s*CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_.]*)`)
	policyEmit    = regexp.MustCompile(`^\s*--\s*events:\s*emit\s*$`)
	policyNone    = regexp.MustCompile(`^\s*--\s*events:\s*none\s*\((.*\S.*)\)\s*$`)
	policyAny     = regexp.MustCompile(`^\s*--\s*events:`)
	createTrigger = regexp.MustCompile(`(?is)CREATE\s+(?:OR\s+REPLACE\s+)?TRIGGER\s+\S+\s+.*?\s+ON\s+([a-z_][a-z0-9_.]*)`)
)

// CheckEventPolicy enforces the per-table event decision on a whole-schema
// SQL text: every CREATE TABLE must be directly preceded by
// "-- events: emit" or "-- events: none (reason)", and a table declared emit
// must have a trigger on it. It returns one error per violation.
func CheckEventPolicy(schema string) []error {
	triggers := map[string]bool{}
	for _, m := range createTrigger.FindAllStringSubmatch(schema, -1) {
		triggers[strings.ToLower(m[1])] = true
	}
	var errs []error
	var prev string // the previous non-blank line
	sc := bufio.NewScanner(strings.NewReader(schema))
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if m := createTable.FindStringSubmatch(text); m != nil {
			table := strings.ToLower(m[1])
			switch {
			case policyEmit.MatchString(prev):
				if !triggers[table] {
					errs = append(errs, fmt.Errorf("line %d: table %s declares events: emit but has no trigger", line, table))
				}
			case policyNone.MatchString(prev):
			case policyAny.MatchString(prev):
				errs = append(errs, fmt.Errorf("line %d: table %s: malformed policy %q (want \"-- events: emit\" or \"-- events: none (reason)\")", line, table, strings.TrimSpace(prev)))
			default:
				errs = append(errs, fmt.Errorf("line %d: table %s declares no event policy (add \"-- events: emit\" or \"-- events: none (reason)\" on the line before)", line, table))
			}
		}
		if strings.TrimSpace(text) != "" {
			prev = text
		}
	}
	return errs
}
