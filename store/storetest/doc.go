// Package storetest is the conformance suite every store backend passes, and a fault-injecting
// store for testing what sits above a backend.
//
// # The suite
//
// A backend's test calls Run with a Harness that opens a fresh, empty store per case:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Harness{
//			Name: "mem",
//			Open: func(t *testing.T) *store.Store { … },
//			Want: map[string]string{probe.CapConditionalCreate: probe.Yes, …},
//		})
//	}
//
// Run promises that every case below holds for a store that keeps the contract in package
// store, and that each fails for a store that does not:
//
//   - Probe: probe.Run gives a definitive verdict for every capability, agreeing with
//     Harness.Want; the coordination mode follows from the verdicts.
//   - Put: bodies empty, small, binary, large and of unknown size round-trip; content type and
//     lowercase user metadata round-trip; a conditional put records a wharf-put-id that
//     store.ResolvePut matches; Put, Head and Get agree on Size and ETag; the ETag changes with
//     the content.
//   - Get: byte ranges (Info.Size is the whole size); reads pinned to the current ETag; reads
//     pinned to a stale ETag fail or not exactly as the probe said.
//   - Conditional: create-if-absent, If-Match with a current, stale or missing ETag, and a
//     stale conditional delete each fail with ErrPreconditionFailed, leaving the object
//     untouched, exactly when the probe says the store enforces them — so a store that ignores
//     a condition it claims is caught. Races of 8 writers have one winner per round, and 4
//     writers incrementing one counter under If-Match lose no update.
//   - Headers: the content type, the four standard headers (Cache-Control,
//     Content-Disposition, Content-Encoding, Content-Language) and metadata come back from Head
//     and Get as written, on a put in one request and in parts; store.Copy (plain and
//     conditional) and store.CopyStream to another store keep them; what a copy's options give
//     replaces them field by field (headers as one). The body is gzip and is read back byte
//     for byte, so a client or server that transcodes Content-Encoding: gzip fails.
//   - Delete, List (sorted, prefixes, delimiters, pages past 1,000 keys, odd keys), Errors
//     (ErrNotExist naming op and key, ErrKeyInvalid before any write, ErrBucketMissing on every
//     op and never an empty listing, the bare context error when cancelled), Copy, and with
//     Harness.Large the multipart cases (byte-exact, the condition kept on the final step, and
//     nothing left at the key or open as an upload after a cancelled or failed body).
//   - Portable: what package store adds over the backend holds on it too — a store opened
//     below a prefix serves keys relative to it for every operation and names the full key in
//     errors; DeleteMany deletes exactly the keys given; MakeBucket is safe to run twice and
//     makes a missing bucket that then takes writes.
//
// The suite never makes one key both an object and a prefix ("a" and "a/b"): a file store
// cannot hold both.
//
// # Faults
//
// Faulty wraps a backend's bucket and injects *store.Error values (transport faults,
// throttling, lost answers after the write was applied, bodies that break mid-read) by Rule,
// counting calls: open a store over it (store.New, or store.Config.Wrap) to test the retry
// policy or a job's handling of ErrOutcomeUnknown end to end.
package storetest
