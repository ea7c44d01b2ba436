// Package gcs is the store backend for Google Cloud Storage and its emulators
// (fake-gcs-server), over the official SDK cloud.google.com/go/storage and its JSON API. Reads
// of Cloud Storage go through the XML API, whose answer carries the user metadata (a JSON API
// read's does not); reads of an emulator go through the JSON API (fake-gcs-server serves
// path-style XML reads only when the Host header is its -public-host, and sends the metadata
// headers on JSON reads too). Every read asks for gzip itself, so that neither GCS (which
// decompresses a Content-Encoding: gzip object for a client that does not accept gzip) nor Go's
// transport transcodes it: the bytes come back as stored. The standard headers are written
// with the object, reported by Head and, from the read's response, by Get. A rewrite takes the
// source's value for any attribute its request leaves empty, so a copy that must remove a
// header or metadata key the source has is streamed through Get and Put.
//
// It registers the scheme "gs"; only cmd/wharf imports it. A Bucket implements driver.Bucket,
// driver.Copier (a rewrite, with generation preconditions on the destination where the server
// honours them) and driver.BucketMaker. It has no batch delete (the SDK has no batch call):
// the portable store's DeleteMany sends single deletes, 16 at a time.
//
// # ETags are generations
//
// The ETag a Bucket reports is the object's generation, as a decimal string ("1712345678901234"):
// it changes with every write of the content, and it is what GCS's preconditions compare.
// Create-if-absent is the precondition DoesNotExist (ifGenerationMatch=0), replace-if-match is
// GenerationMatch, a conditional delete is GenerationMatch on the delete. A read pinned to an
// ETag asks for that generation with the precondition that it is the live one: a superseded
// generation is ErrPreconditionFailed whether the server answers 412 or 404 (no such
// generation). On a bucket with object versioning, GCS may serve the pinned (noncurrent)
// generation instead: the bytes are then exactly the pinned generation's. An ETag that is not
// a generation matches no object (ErrPreconditionFailed, no request).
//
// # Retries and uploads
//
// The SDK's retries are off, every one of them: each call makes one HTTP request (a resumable
// upload one per chunk), over the HTTP client of driver.NewHTTPClient with the authorization
// layer on top, and the portable store (store.Store) applies the one retry policy. (storage.RetryNever
// alone leaves resumable chunks to the upload library's own default retries; the Bucket sets
// a policy whose error test never retries instead.) A read that breaks mid-body is not
// reopened by the SDK (the Bucket refuses the SDK's second request) but by the wrapper,
// resuming pinned to the generation, within the policy's transport attempts.
//
// A put of known size up to one chunk, or of unknown size whose body ends within 256 KiB, is
// read whole into memory first and then sent in one request carrying the body's CRC32C, which
// GCS checks before it stores anything. (The SDK's upload library ends a single request's
// multipart body with its closing boundary even when the body fails mid-stream, and
// fake-gcs-server then stores what arrived; with the whole body in hand and its checksum
// declared, nothing short can be stored.) A larger put is a resumable upload in chunks of
// PartSize (default 16 MiB, rounded up to 256 KiB), one chunk in the SDK's buffer; Concurrency
// does not apply (chunks go in order). Memory is bounded by PartSize. A chunk is not retried
// alone: a failed chunk fails the put, which the wrapper sends again whole, in a new upload,
// when its body can be replayed (a conditional put after a transport fault or a 500 is
// ErrOutcomeUnknown instead). The put's precondition is given when the upload starts and GCS
// checks it when the upload completes; a conditional put whose answer was lost is
// ErrOutcomeUnknown, settled by its wharf-put-id. The upload completes only once the whole body
// has been read: a failing body, one shorter or longer than opts.Size, or a cancelled context
// ends it before its last request (the SDK's pipe is closed with the error, never with a clean
// end), so nothing appears at the key. An upload abandoned that way is never completed and
// holds no object (GCS forgets the session after a week); there is nothing to list or abort.
//
// # URLs, endpoints and credentials
//
//	gs://bucket/prefix                           Cloud Storage (https://storage.googleapis.com)
//	gs://bucket/prefix?endpoint=http://127.0.0.1:4443
//	                                             an emulator (http only on loopback)
//
// With no endpoint configured, STORAGE_EMULATOR_HOST ("host:port", meaning http://host:port,
// or a URL) names an emulator, as Google's SDKs and tools read it, and is checked by the same
// rules as a configured endpoint (WHARF_ENDPOINT_INSECURE, WHARF_ENDPOINT_NOT_ALLOWED); as with
// the SDK, no credentials are sent to it unless service_account_file is given. Otherwise the
// SDK never reads the variable: the endpoint and the HTTP client are always given to it.
//
// Credentials: anonymous (none sent); service_account_file, a reference (env://NAME or
// file:///path) to a service-account JSON key, checked when the store is opened (an
// unreadable reference is WHARF_CREDENTIAL_UNBOUND naming the variable or path; a key that is
// not JSON, not of type service_account, or lacks client_email or a parseable private_key is
// WHARF_CONFIG_INVALID naming the reference and the JSON field, never the content); or, with
// neither, application default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's
// application_default_credentials.json, the metadata server), looked up on the first request,
// so Open connects to nothing. credentials: role is refused (it is S3's). MakeBucket creates
// the bucket in GOOGLE_CLOUD_PROJECT, else the key's project_id, else the default credentials'
// project, else (an emulator) in project EmulatorProject; the config's region, if any, is its
// location.
//
// # Errors
//
// SDK errors are mapped in one function (mapError) from the HTTP status and GCS's reason:
//
//	404 on get, head, delete, copy, list          driver.ErrNotExist, or driver.ErrBucketMissing
//	                                              naming the bucket when a bucket lookup says
//	                                              it is absent (GCS answers 404 for both)
//	404 on an upload                              driver.ErrBucketMissing as above; with the
//	                                              bucket there, ErrPreconditionFailed on a
//	                                              replace-if-match, else ErrUnavailable
//	412, 409                                      driver.ErrPreconditionFailed
//	401, 403, no credentials, no token            driver.ErrForbidden
//	400, 405, 501                                 driver.ErrUnsupported
//	429, 500, 502, 503, 504                       driver.ErrUnavailable, FaultThrottled
//	408, reset, timeout, truncated body,
//	token endpoint unreachable                    driver.ErrUnavailable, FaultTransport
//
// Every *driver.Error carries the HTTP status and GCS's reason (or the XML API's code). The
// caller's context error passes through unwrapped. No error or log line holds a credential.
package gcs
