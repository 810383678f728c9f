package main

// unseal.go is the only place that opens sealed secrets: the domains seal
// and unseal through named function types they declare, provided here from
// the instance's cryptobox. Keep every (*cryptobox.Box).Open call in this
// file.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/google/wire"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/cryptobox"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// SealSet provides the cryptobox, each domain's seal and unseal functions,
// and the master-key rotation built on them.
var SealSet = wire.NewSet(
	provideBox,
	provideInboundSeal,
	provideInboundUnseal,
	provideWebhookSeal,
	provideWebhookUnseal,
	provideMasterKeyRotator,
	provideHeaderSealer,
)

// provideBox builds the cryptobox from the master key, with the previous
// master keys still opening what they sealed (rotation).
func provideBox(cfg config.Config) (*cryptobox.Box, error) {
	if len(cfg.MasterKey) != cryptobox.KeySize {
		return nil, &config.Error{Var: "STANDMEET_MASTER_KEY", Reason: fmt.Sprintf("want %d bytes", cryptobox.KeySize)}
	}
	primary := cryptobox.Key{}
	copy(primary.Secret[:], cfg.MasterKey)
	primary.ID = cryptobox.DeriveKeyID(primary.Secret)
	old := make([]cryptobox.Key, 0, len(cfg.OldMasterKeys))
	for _, raw := range cfg.OldMasterKeys {
		if len(raw) != cryptobox.KeySize {
			return nil, &config.Error{Var: "STANDMEET_MASTER_KEY_OLD", Reason: fmt.Sprintf("want %d bytes per key", cryptobox.KeySize)}
		}
		k := cryptobox.Key{}
		copy(k.Secret[:], raw)
		k.ID = cryptobox.DeriveKeyID(k.Secret)
		old = append(old, k)
	}
	return cryptobox.New(primary, old...)
}

// provideInboundSeal seals inbound source secrets (associated data: the
// source id's bytes).
func provideInboundSeal(box *cryptobox.Box) inbound.SealFunc { return box.Seal }

// provideInboundUnseal opens inbound source secrets for the gateway.
func provideInboundUnseal(box *cryptobox.Box) inbound.UnsealFunc { return box.Open }

// provideWebhookSeal seals webhook endpoint secrets (associated data: the
// endpoint id's bytes).
func provideWebhookSeal(box *cryptobox.Box) webhook.SealFunc { return box.Seal }

// provideWebhookUnseal opens webhook endpoint secrets for the delivery
// worker, which signs with them.
func provideWebhookUnseal(box *cryptobox.Box) delivery.UnsealFunc { return box.Open }

// sealedColumn names a column holding cryptobox-sealed values whose
// associated data is the row's uuid id.
type sealedColumn struct{ table, column string }

// sealedColumns lists every sealed column of the schema. A new sealed
// column must be added here, or rotate-master-key leaves it under the old key.
func sealedColumns() []sealedColumn {
	return []sealedColumn{
		{"webhook_endpoints", "secret_enc"},
		{"webhook_endpoints", "prev_secret_enc"},
		{"inbound_sources", "sealed_secret"},
		{"inbound_sources", "previous_sealed_secret"},
	}
}

// masterKeyRotator re-seals every sealed secret under the primary master key
// and returns how many values it re-sealed.
type masterKeyRotator func(ctx context.Context) (int, error)

// provideMasterKeyRotator builds `standmeet rotate-master-key`. Each value is
// updated only if it is still the one read (compare-and-set), so a secret
// rotated by the server meanwhile is never overwritten.
func provideMasterKeyRotator(pool *pgxpool.Pool, box *cryptobox.Box) masterKeyRotator {
	return func(ctx context.Context) (int, error) {
		total := 0
		for _, sc := range sealedColumns() {
			table, column := pgx.Identifier{sc.table}.Sanitize(), pgx.Identifier{sc.column}.Sanitize()
			rows, err := pool.Query(ctx, `SELECT id, `+column+` FROM `+table+` WHERE `+column+` IS NOT NULL`)
			if err != nil {
				return total, fmt.Errorf("read %s.%s: %w", sc.table, sc.column, err)
			}
			type sealedRow struct {
				id     uuid.UUID
				sealed []byte
			}
			var todo []sealedRow
			for rows.Next() {
				var r sealedRow
				if err := rows.Scan(&r.id, &r.sealed); err != nil {
					rows.Close()
					return total, fmt.Errorf("read %s.%s: %w", sc.table, sc.column, err)
				}
				if box.NeedsReseal(r.sealed) {
					todo = append(todo, r)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return total, fmt.Errorf("read %s.%s: %w", sc.table, sc.column, err)
			}
			for _, r := range todo {
				fresh, err := box.Reseal(r.sealed, r.id[:])
				if err != nil {
					return total, fmt.Errorf("re-seal %s.%s of %s: %w", sc.table, sc.column, r.id, err)
				}
				if _, err := pool.Exec(ctx, `UPDATE `+table+` SET `+column+` = $1 WHERE id = $2 AND `+column+` = $3`, fresh, r.id, r.sealed); err != nil {
					return total, fmt.Errorf("write %s.%s of %s: %w", sc.table, sc.column, r.id, err)
				}
				total++
			}
		}
		n, err := sealHeaderValues(ctx, pool, box)
		return total + n, err
	}
}

// headerSealer seals custom webhook header values stored in the clear
// (before values were sealed) at start; it runs once and returns.
type headerSealer Background

func provideHeaderSealer(pool *pgxpool.Pool, box *cryptobox.Box, logger *zap.Logger) headerSealer {
	return BackgroundFunc(func(ctx context.Context) error {
		n, err := sealHeaderValues(ctx, pool, box)
		if err != nil {
			return fmt.Errorf("seal webhook header values: %w", err)
		}
		if n > 0 {
			logger.Info("sealed custom webhook header values stored in the clear", zap.Int("values", n))
		}
		return nil
	})
}

// sealHeaderValues brings every custom header value of webhook_endpoints
// under the primary master key: a value stored in the clear is sealed, one
// sealed under an old key re-sealed (associated data: the endpoint id, as
// for its secrets). It returns how many values it wrote. Each row is
// updated only if its headers are still the ones read.
func sealHeaderValues(ctx context.Context, pool *pgxpool.Pool, box *cryptobox.Box) (int, error) {
	rows, err := pool.Query(ctx, `SELECT id, headers FROM webhook_endpoints WHERE headers <> '{}'::jsonb`)
	if err != nil {
		return 0, fmt.Errorf("read webhook_endpoints.headers: %w", err)
	}
	type headerRow struct {
		id  uuid.UUID
		raw []byte
	}
	var all []headerRow
	for rows.Next() {
		var r headerRow
		if err := rows.Scan(&r.id, &r.raw); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read webhook_endpoints.headers: %w", err)
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read webhook_endpoints.headers: %w", err)
	}
	total := 0
	for _, r := range all {
		var h map[string]string
		if err := json.Unmarshal(r.raw, &h); err != nil {
			return total, fmt.Errorf("headers of endpoint %s: %w", r.id, err)
		}
		n := 0
		for name, v := range h {
			if sealed, ok := domain.OpenSealedText(v); ok {
				if !box.NeedsReseal(sealed) {
					continue
				}
				fresh, err := box.Reseal(sealed, r.id[:])
				if err != nil {
					return total, fmt.Errorf("re-seal header %s of endpoint %s: %w", name, r.id, err)
				}
				h[name] = domain.SealedText(fresh)
			} else {
				sealed, err := box.Seal([]byte(v), r.id[:])
				if err != nil {
					return total, fmt.Errorf("seal header %s of endpoint %s: %w", name, r.id, err)
				}
				h[name] = domain.SealedText(sealed)
			}
			n++
		}
		if n == 0 {
			continue
		}
		b, err := json.Marshal(h)
		if err != nil {
			return total, fmt.Errorf("encode headers of endpoint %s: %w", r.id, err)
		}
		if _, err := pool.Exec(ctx, `UPDATE webhook_endpoints SET headers = $1 WHERE id = $2 AND headers = $3::jsonb`, b, r.id, r.raw); err != nil {
			return total, fmt.Errorf("write headers of endpoint %s: %w", r.id, err)
		}
		total += n
	}
	return total, nil
}
