// Package owner is the owner domain: the accounts that own a StandMeet
// instance, how they prove who they are (passwords, server-side sessions,
// API keys), account recovery and email change, brute-force protection with
// IP bans, and the instance-level upgrade request.
//
// The package depends only on ports it declares (ports.go): a UnitOfWork
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
