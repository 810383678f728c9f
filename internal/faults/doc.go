// Package faults holds the fault tests of the StandMeet server: real server
// processes (bin/standmeet, built by the tests or named by STANDMEET_BIN)
// on a shared database, loopback receivers that verify every signature and
// record webhook-id, arrival time and concurrency per endpoint, and faults
// injected from outside: kill -9 of a replica, a PostgreSQL restart, flaky
// and hostile receivers.
//
// What they prove, each as a test that fails otherwise:
//
//   - at-least-once: every event in the events table reached every endpoint
//     it matches (lost = 0); duplicates are counted by webhook-id and
//     reported;
//   - the lease: no endpoint ever sees two requests in flight at once, across
//     replicas;
//   - nothing stays running: after the dust settles no River job is left in
//     state running;
//   - failing receivers get everything deliverable in the end, a 410 ends the
//     endpoint's deliveries as discarded, and hostile receivers cost bounded
//     time and memory and never make the worker dial anything else.
//
// `go test ./...` runs a bounded version (small workloads, the kill and
// PostgreSQL-restart tests skipped with a message); `make test-faults` sets
// STANDMEET_FAULTS=full and runs them all at full size.
package faults
