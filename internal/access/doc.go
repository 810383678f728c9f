// Package access is the access domain of the StandMeet server: roles (URI
// globs a reader may see, and whether only the published slice), access
// codes issued for a role (shown once, stored hashed, revocable, expiring,
// with deny globs of their own), embeds that expose one code elsewhere,
// and access requests from visitors with their approval flow.
//
// Every admission decision goes through the one ACL predicate,
// entity.AllowsCorpusEntry. EmbedAdmits answers from the embed's current code
// and role each time it is asked, so a revocation, an expiry, a deleted embed
// or a re-scoped role takes effect on the next event, and raw:// is never
// admitted. The owner domain receives EmbedAdmits and EmbedBelongsTo as
// functions from the composition root and never imports this package.
//
// The package depends only on ports; the postgres adapter implements them
// and accesstest provides the in-memory implementation the same contract
// tests run against.
package access
