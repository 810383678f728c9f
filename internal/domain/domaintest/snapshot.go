package domaintest

import (
	"context"
	"sync"
)

// Snapshot is the fake twin of a database transaction over a state S:
// transactions are serialised, Do runs fn on a copy of the state and keeps
// the copy only when fn returns nil, so a failed use case leaves nothing
// behind, as a rolled-back transaction would. Events recorded through the
// Recorder fn is handed are committed with the state, and only then.
type Snapshot[S any] struct {
	mu         sync.Mutex
	state      S
	clone      func(S) S
	rec        *Recorder
	total      int
	rolledBack int
}

// NewSnapshot returns a store holding initial; clone copies a state deeply
// enough that writes to the copy never reach the original.
func NewSnapshot[S any](initial S, clone func(S) S) *Snapshot[S] {
	return &Snapshot[S]{state: initial, clone: clone, rec: NewRecorder()}
}

// Do runs fn in a transaction of its own: on a copy of the state, with a
// Recorder bound to the transaction. fn's error is returned as is and
// discards the copy and the events; nil commits both. ctx is not
// consulted: a fake that refuses a cancelled context checks it in its own
// Do.
func (s *Snapshot[S]) Do(_ context.Context, fn func(st *S, rec *TxRecorder) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	work := s.clone(s.state)
	rec := s.rec.Tx()
	defer rec.End()
	s.total++
	if err := fn(&work, rec); err != nil {
		s.rolledBack++
		return err
	}
	s.state = work
	rec.Commit()
	return nil
}

// View runs fn on the committed state, serialised with transactions. fn
// must not keep or modify what it reads.
func (s *Snapshot[S]) View(fn func(st S)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.state)
}

// Update changes the committed state outside any transaction (a test's
// setup).
func (s *Snapshot[S]) Update(fn func(st *S)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.state)
}

// Recorder returns the store's Recorder: the events of committed
// transactions, and the switch that makes recording fail.
func (s *Snapshot[S]) Recorder() *Recorder { return s.rec }

// Transactions returns how many transactions ran and how many rolled back.
func (s *Snapshot[S]) Transactions() (total, rolledBack int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, s.rolledBack
}
