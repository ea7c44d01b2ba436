// Package upload is the one upload engine of wharf's backends: how a Put whose body is large,
// or of unknown size, becomes an object sent in parts (S3's multipart upload, Azure's staged
// blocks), with the same promises on every store that uses it.
//
// # Promises
//
//   - A body of known size up to the backend's single-request limit goes in one request
//     carrying the put's condition; so does a body of unknown size that ends within the first
//     part, which is read into a pooled buffer first.
//   - A larger body goes in parts. Memory is bounded: at most Concurrency parts of PartSize
//     are buffered at once for one upload, the buffers pooled by size across uploads; a body
//     that is also an io.ReaderAt of known size is read in place instead (a local file's
//     parts are sections of the file, read again for a resend), needing no buffers.
//   - Each part is one request, retried alone under the retry policy; the whole object is
//     never sent again because one part failed.
//   - The commit carries the put's condition, on the request that makes the object (S3's
//     CompleteMultipartUpload, Azure's Put Block List). Every upload in parts carries a
//     wharf-put-id in its metadata, so a commit whose answer is lost is settled by one head of
//     the key: our put-id there means it landed, and the put succeeds. An unconditional commit
//     that did not land is sent again; a conditional one is never resent and returns
//     ErrOutcomeUnknown with the put-id, for the caller to settle.
//   - Every put knows the CRC-32C of its bytes before it sends them. A body sent in one request
//     is read once for it first (a body that can seek, rewound) or read into memory (at most
//     the single-request limit), and Single gets it in PutOptions.CRC32C. Each part's is
//     computed before it is sent and given to Send, and the whole object's, combined from
//     them, to Commit: the backend sends them where the store checks them.
//   - A body that ends before its announced size, or runs past it, fails the put, naming the
//     key; nothing is committed.
//   - Any failure or cancellation aborts the upload (on a context of its own, bounded), so
//     no parts stay billed; errors leave with Fault None, so that a retry above does not
//     resend the whole object, or as the context's own error once the caller's ctx ended.
package upload
