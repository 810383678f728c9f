// Package batch runs many callers' statements as one: the calls that
// arrive while a statement for others is under way wait and go together in
// the next one, so under load many calls share one statement and one
// transaction, and a call alone goes at once.
package batch

import (
	"context"
	"sync"
	"time"
)

// Group runs calls in groups. A call that arrives while MaxFlights
// statements run waits and goes in the next group. Two calls with the same
// key never share a statement (the second goes in a later one), so each
// sees the other's change as it would one statement after another; a call
// whose Key returns ok false shares with anyone.
type Group[Req, Res any] struct {
	// Run executes one group; it returns one result per request, in order.
	// A failed run fails every call it carried.
	Run func(ctx context.Context, reqs []Req) ([]Res, error)
	// Key says which calls must not share a statement; nil: all may.
	Key func(Req) (key any, ok bool)
	// MaxBatch bounds the calls of one statement (default 256).
	MaxBatch int
	// MaxFlights bounds the statements in flight (default 1).
	MaxFlights int
	// Timeout bounds one statement, whatever happens to the calls waiting
	// for it (default 15 s).
	Timeout time.Duration

	mu     sync.Mutex
	queue  []*call[Req, Res]
	active int
}

type call[Req, Res any] struct {
	req  Req
	wake chan struct{}
	// Set under Group.mu before wake is signalled.
	done, lead bool
	res        Res
	err        error
}

// Do runs req in a group and returns its result once that group's
// statement has ended. The statement runs detached from ctx (bounded by
// Timeout): a change made for a caller that stops waiting would otherwise
// be applied with no one to act on it.
func (g *Group[Req, Res]) Do(ctx context.Context, req Req) (Res, error) {
	c := &call[Req, Res]{req: req, wake: make(chan struct{}, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if g.active < max(g.MaxFlights, 1) {
		g.active++
		c.lead = true
	}
	g.mu.Unlock()
	for {
		g.mu.Lock()
		lead, done := c.lead, c.done
		c.lead = false
		if done && lead {
			g.handOffLocked()
		}
		g.mu.Unlock()
		switch {
		case done:
			return c.res, c.err
		case lead:
			g.flush(ctx)
		default:
			<-c.wake
		}
	}
}

// flush runs the next group from the queue, then hands the lead to the
// first call still waiting, or ends this flight.
func (g *Group[Req, Res]) flush(ctx context.Context) {
	g.mu.Lock()
	maxBatch := g.MaxBatch
	if maxBatch <= 0 {
		maxBatch = 256
	}
	n := min(len(g.queue), maxBatch)
	taken := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	if len(taken) > 0 {
		seen := make(map[any]bool, len(taken))
		var later []*call[Req, Res]
		run := taken[:0:0]
		reqs := make([]Req, 0, len(taken))
		for _, c := range taken {
			if g.Key != nil {
				if k, ok := g.Key(c.req); ok {
					if seen[k] {
						later = append(later, c)
						continue
					}
					seen[k] = true
				}
			}
			run = append(run, c)
			reqs = append(reqs, c.req)
		}
		timeout := g.Timeout
		if timeout <= 0 {
			timeout = 15 * time.Second
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		res, err := g.Run(fctx, reqs)
		cancel()
		g.mu.Lock()
		g.queue = append(later, g.queue...)
		for i, c := range run {
			c.done, c.err = true, err
			if err == nil {
				c.res = res[i]
			}
			wake(c.wake)
		}
		g.mu.Unlock()
	}
	g.mu.Lock()
	g.handOffLocked()
	g.mu.Unlock()
}

// handOffLocked gives the lead to the first waiting call, or ends the
// flight when none waits.
func (g *Group[Req, Res]) handOffLocked() {
	for _, c := range g.queue {
		if !c.done && !c.lead {
			c.lead = true
			wake(c.wake)
			return
		}
	}
	g.active--
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
