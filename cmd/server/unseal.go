package main

// unseal.go is the only place that opens sealed secrets: the domains seal
// and unseal through named function types they declare, provided here from
// the instance's cryptobox. Keep every (*cryptobox.Box).Open call in this
// file.

import (
	"fmt"

	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/cryptobox"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	whsub "github.com/standmeet/standmeet/internal/owner/subscriber"
	"github.com/standmeet/standmeet/internal/owner/webhooks"
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
func provideWebhookSeal(box *cryptobox.Box) webhooks.SealFunc { return box.Seal }

// provideWebhookUnseal opens webhook endpoint secrets for the delivery
// worker, which signs with them.
func provideWebhookUnseal(box *cryptobox.Box) whsub.UnsealFunc { return box.Open }
