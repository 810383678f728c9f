package owner

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// banCache holds the set of banned IPs so the check that runs before every
// request costs an atomic load and a map lookup, not a query. The replica
// that adds or lifts a ban invalidates it at once; other replicas see the
// change within BanCacheTTL. One request at a time reloads an expired set;
// the others keep using the previous one meanwhile, and a failed reload
// keeps the previous set for another TTL, so a database outage costs one
// failed query per TTL instead of one per request.
type banCache struct {
	snap   atomic.Pointer[banSnapshot]
	reload sync.Mutex
	// gen counts invalidations, so a reload that read the list before a
	// ban committed does not store that older list as fresh.
	gen atomic.Uint64
}

type banSnapshot struct {
	ips      map[string]struct{}
	loadedAt time.Time
}

func (b *banSnapshot) fresh(now time.Time, ttl time.Duration) bool {
	return b != nil && !now.Before(b.loadedAt) && now.Sub(b.loadedAt) < ttl
}

func (b *banSnapshot) has(ip string) bool {
	if b == nil {
		return false
	}
	_, ok := b.ips[ip]
	return ok
}

func (c *banCache) invalidate() {
	c.gen.Add(1)
	c.snap.Store(nil)
}

// store keeps next unless the cache was invalidated since gen.
func (c *banCache) store(next *banSnapshot, gen uint64) {
	if c.gen.Load() == gen {
		c.snap.Store(next)
	}
}

// IsBanned reports whether ip has an active ban. An empty ip is never
// banned. When the ban list cannot be read it answers from the last list
// it read (none: not banned) together with the error.
func (s *Service) IsBanned(ctx context.Context, ip string) (bool, error) {
	if ip == "" {
		return false, nil
	}
	now := s.now()
	c := &s.bans
	snap := c.snap.Load()
	if snap.fresh(now, s.limits.BanCacheTTL) {
		return snap.has(ip), nil
	}
	if !c.reload.TryLock() {
		if snap != nil {
			// Another request is reloading; the previous list will do.
			return snap.has(ip), nil
		}
		c.reload.Lock()
	}
	defer c.reload.Unlock()
	if snap = c.snap.Load(); snap.fresh(now, s.limits.BanCacheTTL) {
		return snap.has(ip), nil
	}
	gen := c.gen.Load()
	var ips []string
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		ips, err = tx.Bans().ActiveIPs(ctx, now)
		return err
	})
	if err != nil {
		kept := &banSnapshot{loadedAt: now}
		if snap != nil {
			kept.ips = snap.ips
		}
		c.store(kept, gen)
		return kept.has(ip), fmt.Errorf("load banned addresses: %w", err)
	}
	next := &banSnapshot{ips: make(map[string]struct{}, len(ips)), loadedAt: now}
	for _, b := range ips {
		next.ips[b] = struct{}{}
	}
	c.store(next, gen)
	return next.has(ip), nil
}

// recordLoginFailure counts a refused login and, when the IP has now been
// refused BanAfter times in BanWindow, bans it: one ban per owner whose
// account it targeted (the instance's first owner when it named no
// account), each recorded as ip_ban.added in tx. The IP's failures are then
// forgotten, so lifting the ban gives it a clean slate. It reports whether
// a ban was added.
func (s *Service) recordLoginFailure(ctx context.Context, tx Tx, ip, email string, ownerID *uuid.UUID, now time.Time) (bool, error) {
	if err := tx.Attempts().Add(ctx, Attempt{Kind: AttemptLoginFailure, IP: ip, Email: email, OwnerID: ownerID, At: now}); err != nil {
		return false, err
	}
	if ip == "" {
		return false, nil
	}
	since := now.Add(-s.limits.BanWindow)
	n, err := tx.Attempts().CountByIP(ctx, AttemptLoginFailure, ip, since)
	if err != nil || n < s.limits.BanAfter {
		return false, err
	}
	owners, err := tx.Attempts().TargetedOwners(ctx, AttemptLoginFailure, ip, since)
	if err != nil {
		return false, err
	}
	if len(owners) == 0 {
		first, err := tx.Owners().Oldest(ctx)
		if isNotFound(err) {
			// No owner, nothing to protect or to tell: limits still apply.
			return false, nil
		}
		if err != nil {
			return false, err
		}
		owners = []uuid.UUID{first.ID}
	}
	added := false
	for _, oid := range owners {
		id, err := newID()
		if err != nil {
			return false, err
		}
		b := IPBan{
			ID: id, OwnerID: oid, IP: ip, CreatedAt: now, ExpiresAt: now.Add(s.limits.BanDuration),
			Reason: fmt.Sprintf("%d failed logins within %s", n, s.limits.BanWindow),
		}
		ok, err := tx.Bans().Add(ctx, b)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		added = true
		if _, err := tx.Recorder().Record(ctx, oid, domain.EventIPBanAdded, subjectIPBan(b.ID), map[string]any{
			"ip_ban_id":  b.ID,
			"ip":         ip,
			"reason":     b.Reason,
			"expires_at": b.ExpiresAt,
		}); err != nil {
			return false, err
		}
	}
	return added, tx.Attempts().DeleteByIP(ctx, AttemptLoginFailure, ip)
}

// ListBans returns a page of the owner's active bans, newest first.
func (s *Service) ListBans(ctx context.Context, ownerID uuid.UUID, page op.PageInput) (op.Page[IPBan], error) {
	after, err := decodeBanCursor(page.Cursor)
	if err != nil {
		return op.Page[IPBan]{}, err
	}
	limit := page.NormalizedLimit()
	now := s.now()
	var rows []IPBan
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.Bans().ListActive(ctx, ownerID, now, after, limit+1)
		return err
	})
	if err != nil {
		return op.Page[IPBan]{}, fmt.Errorf("list bans: %w", err)
	}
	return op.NewPage(rows, limit, encodeBanCursor), nil
}

// LiftBan ends the owner's active ban at once (on this replica; others
// within BanCacheTTL). Another owner's ban, or one already ended, is
// NOT_FOUND.
func (s *Service) LiftBan(ctx context.Context, ownerID, id uuid.UUID) error {
	now := s.now()
	err := s.uow.Do(ctx, func(tx Tx) error {
		return tx.Bans().Lift(ctx, ownerID, id, now)
	})
	if err != nil {
		return fmt.Errorf("lift ban: %w", err)
	}
	s.bans.invalidate()
	return nil
}

func encodeBanCursor(b IPBan) string {
	return op.KeysetCursor{At: b.CreatedAt, ID: b.ID}.String()
}

func decodeBanCursor(c string) (*BanCursor, error) {
	k, err := op.ParseKeysetCursor(c)
	if k == nil || err != nil {
		return nil, err
	}
	return &BanCursor{CreatedAt: k.At, ID: k.ID}, nil
}
