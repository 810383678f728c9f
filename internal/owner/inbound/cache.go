package inbound

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// SourceCacheTTL bounds how long a gateway keeps using a source as it last
// read it. A change committed on any replica — an update, a secret
// rotation, a disable, a delete — reaches every replica's gateway within
// this time; the replica that made the change forgets the source at once.
const SourceCacheTTL = 500 * time.Millisecond

// sourceCacheMax bounds the sources one gateway keeps (unknown ids included,
// so a sender probing random ids cannot grow it without bound).
const sourceCacheMax = 10000

// SourceCache keeps the sources the gateway reads, with their built
// verifiers and unsealed secrets, for SourceCacheTTL. Concurrent requests
// for a source that is not cached share one lookup. It is safe for
// concurrent use.
type SourceCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[uuid.UUID]*cachedSource
}

// NewSourceCache returns an empty cache whose entries live ttl
// (SourceCacheTTL when ttl ≤ 0).
func NewSourceCache(ttl time.Duration) *SourceCache {
	if ttl <= 0 {
		ttl = SourceCacheTTL
	}
	return &SourceCache{ttl: ttl, m: map[uuid.UUID]*cachedSource{}}
}

// Forget drops the source, so the next request reads it again.
func (c *SourceCache) Forget(id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// cachedSource is one source as the gateway uses it. err is the answer for
// a source that is unknown, disabled or misconfigured.
type cachedSource struct {
	ready chan struct{}
	// readAt is when the lookup started: whatever it read was current then,
	// so the entry expires ttl after it.
	readAt  time.Time
	src     Source
	v       verifier.Verifier
	secrets [][]byte
	err     error
	// loadErr is a storage failure; such an entry is never kept.
	loadErr error
}

// get returns the usable entry for id, loading it when it is missing or
// expired.
func (c *SourceCache) get(ctx context.Context, id uuid.UUID, load func(ctx context.Context, prev *cachedSource, e *cachedSource)) (*cachedSource, error) {
	c.mu.Lock()
	e := c.m[id]
	if e != nil {
		select {
		case <-e.ready:
			if time.Since(e.readAt) < c.ttl {
				c.mu.Unlock()
				return e, nil
			}
		default:
			c.mu.Unlock()
			select {
			case <-e.ready:
				return e, e.loadErr
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	prev := e
	e = &cachedSource{ready: make(chan struct{}), readAt: time.Now()}
	if len(c.m) >= sourceCacheMax {
		c.evictLocked()
	} else {
		c.sweepLocked(8)
	}
	c.m[id] = e
	c.mu.Unlock()

	load(ctx, prev, e)
	if e.loadErr != nil {
		c.mu.Lock()
		if c.m[id] == e {
			delete(c.m, id)
		}
		c.mu.Unlock()
	}
	close(e.ready)
	return e, e.loadErr
}

// sweepLocked drops the expired entries among up to n entries (in map
// order, so successive sweeps visit different ones): an expired entry no
// longer keeps its unsealed secrets in memory for long.
func (c *SourceCache) sweepLocked(n int) {
	for id, e := range c.m {
		if n--; n < 0 {
			return
		}
		select {
		case <-e.ready:
			if time.Since(e.readAt) >= c.ttl {
				delete(c.m, id)
			}
		default:
		}
	}
}

// evictLocked drops expired entries, or half the cache when none is.
func (c *SourceCache) evictLocked() {
	n := 0
	for id, e := range c.m {
		select {
		case <-e.ready:
			if time.Since(e.readAt) >= c.ttl {
				delete(c.m, id)
				n++
			}
		default:
		}
	}
	for id := range c.m {
		if n >= sourceCacheMax/2 {
			break
		}
		delete(c.m, id)
		n++
	}
}

// source returns the enabled source id with its verifier and its secrets
// (the current one first), or the error to answer — with the entry when
// the source exists, so the refusal can name its owner.
func (g *Gateway) source(ctx context.Context, id uuid.UUID) (*cachedSource, error) {
	e, err := g.cache.get(ctx, id, func(ctx context.Context, prev, e *cachedSource) {
		src, err := g.d.Sources.Lookup(ctx, id)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			e.err = ErrSourceNotFound
			return
		case err != nil:
			e.loadErr = fmt.Errorf("look up inbound source %s: %w", id, err)
			return
		case !src.Enabled:
			e.src, e.err = src, ErrSourceNotFound
			return
		}
		e.src = src
		if prev != nil && prev.err == nil && prev.src.UpdatedAt.Equal(src.UpdatedAt) && prev.src.PreviousSecretExpiresAt.Equal(src.PreviousSecretExpiresAt) {
			e.v, e.secrets = prev.v, prev.secrets
			return
		}
		e.v, e.secrets, e.err = g.build(src)
	})
	if err != nil {
		return nil, err
	}
	if e.err != nil {
		return e, e.err
	}
	return e, nil
}

// build makes the source's verifier and opens its secrets: the current one,
// then the previous one while its grace lasts.
func (g *Gateway) build(src Source) (verifier.Verifier, [][]byte, error) {
	factory, err := g.d.Verifiers.Lookup(src.Verifier)
	if err != nil {
		return nil, nil, fmt.Errorf("inbound source %s: %w", src.ID, verifier.ErrMisconfigured)
	}
	v, err := factory.New(src.Options)
	if err != nil {
		return nil, nil, fmt.Errorf("inbound source %s: build verifier: %w: %v", src.ID, verifier.ErrMisconfigured, err)
	}
	secret, err := g.d.Unseal(src.SealedSecret, src.ID[:])
	if err != nil {
		return nil, nil, fmt.Errorf("inbound source %s: unseal secret: %w", src.ID, err)
	}
	secrets := [][]byte{secret}
	if len(src.PreviousSealedSecret) > 0 {
		prev, err := g.d.Unseal(src.PreviousSealedSecret, src.ID[:])
		if err != nil {
			return nil, nil, fmt.Errorf("inbound source %s: unseal previous secret: %w", src.ID, err)
		}
		secrets = append(secrets, prev)
	}
	return v, secrets, nil
}
