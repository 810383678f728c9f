// Package owner is the owner domain: everything that belongs to one owner's
// instance and is isolated by owner on every route. It holds four domains,
// each a package depending only on ports it declares:
//
//   - owner itself, the accounts: the owners of an instance, how they prove
//     who they are (passwords, server-side sessions, API keys), account
//     recovery and email change, brute-force protection with IP bans, the
//     operator's role and the instance-level upgrade request;
//   - owner/webhook, the outbound endpoints an owner registers (validation,
//     sealed signing secrets, settings, the delivery log and steering), with
//     owner/webhook/delivery, the fan-out and delivery of events to them;
//   - owner/inbound, the sources that receive webhooks from outside services:
//     the gateway, the durable inbox, verifiers, processing, dead letters and
//     supplier connections;
//   - owner/publish, the owner's other services publishing events of the
//     externally produced types.
//
// They live under the owner because each is configuration or traffic of one
// owner's instance, like the accounts themselves: an endpoint, a source or a
// published event belongs to exactly one owner and is reached only through
// that owner's credentials. The corpus and access domains stand beside it;
// the owner domain reaches access only through the EmbedAdmitsFunc the
// composition root hands it.
//
// The accounts package depends only on ports it declares (ports.go): a UnitOfWork
// whose Tx hands out the stores and the Recorder bound to that transaction, a
// Clock, a PasswordHasher, a TokenGenerator and a RecoveryMailer reached
// through a transactional outbox. Adapters implement them: PostgreSQL in
// internal/adapters/postgres/ownerdb, argon2id and the HTTP authenticator in
// internal/adapters/httpapi/auth. Memory implements the storage ports in
// memory for unit tests; the adapter's contract suite runs against both so
// the two cannot drift.
//
// Secrets are never stored or logged in the clear: session tokens, API keys
// and recovery tokens are kept as SHA-256 digests (they carry 256 random
// bits, so a fast hash is enough), passwords as argon2id hashes.
//
// Every event (owner.login, owner.email_changed, owner.recovery_requested,
// api_key.issued, api_key.revoked, ip_ban.added, instance.upgrade_requested)
// is recorded through Tx.Recorder inside the use case's transaction, so it
// exists exactly when the change it describes commits.
package owner
