// Package domain is the shared kernel of the StandMeet server: identifiers,
// the event catalog, the Recorder port every use case writes events through,
// glob matching, the clock port and the error values that surfaces map to the
// contract's error codes.
//
// It imports only the standard library and small pure libraries, so every
// domain (owner, access, corpus) can depend on it without depending on each
// other or on any adapter.
package domain
