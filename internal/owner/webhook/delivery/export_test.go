package delivery

import (
	"time"

	"github.com/google/uuid"
)

// MaxLocalWaiters exports maxLocalWaiters to the package's external tests.
const MaxLocalWaiters = maxLocalWaiters

// Waiting returns how many deliveries wait in process for the endpoint.
func (d *Deliverer) Waiting(endpointID uuid.UUID) int {
	d.local.mu.Lock()
	defer d.local.mu.Unlock()
	if q := d.local.eps[endpointID]; q != nil {
		return len(q.waiters)
	}
	return 0
}

// Wait queues a waiter for the endpoint in process behind a holder here
// of its one slot, as a busy delivery does; false when the endpoint has
// MaxLocalWaiters already.
func (d *Deliverer) Wait(endpointID uuid.UUID) bool {
	d.local.begin(endpointID)
	d.local.mu.Lock()
	defer d.local.mu.Unlock()
	q := d.local.queue(endpointID)
	if q.holders == 0 {
		q.holders, q.slots = 1, 1
	}
	return q.enqueue() != nil
}

// Request builds the POST of ev to ep at now.
func (d *Deliverer) Request(ep Endpoint, ev Event, now time.Time) (PostRequest, error) {
	return d.request(ep, ev, now)
}
