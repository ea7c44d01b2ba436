// Package s3 is the store backend for Amazon S3 and S3-compatible stores (MinIO, SeaweedFS,
// Ceph, Cloudflare R2), over the official SDK github.com/aws/aws-sdk-go-v2/service/s3.
//
// It registers the schemes "s3" and "r2"; only cmd/wharf imports it. A Bucket implements
// store.Store, store.Copier (CopyObject, with If-None-Match/If-Match where the server honours
// them), store.BucketMaker (CreateBucket; a bucket already owned by the caller is success) and
// store.Describer, plus DeleteMany, a batch delete over DeleteObjects for recursive removal.
//
// The SDK's own retries are off: a Bucket makes one HTTP request per call, over the HTTP
// client of store.NewHTTPClient, and store.Open's wrapper applies the one retry policy. A put
// larger than 16 MiB (or of unknown size beyond one part) goes multipart: parts of PartSize
// (default 16 MiB, at least 5 MiB), Concurrency (default 4) in flight, memory bounded by
// Concurrency × PartSize, each part retried alone. The put's condition rides on
// CompleteMultipartUpload, which is never resent after a lost answer (ErrOutcomeUnknown). Any
// failure or cancellation aborts the upload: nothing stays billed. Request bodies are sent
// with an unsigned payload (no per-byte hashing); checksums are computed only where an
// operation requires them.
//
// # URLs
//
//	s3://bucket/prefix                    AWS S3; region from the config, else the SDK's
//	                                      environment (AWS_REGION, profile), else us-east-1
//	s3://bucket/prefix?endpoint=https://host:port
//	                                      an S3-compatible store, path-style addressing
//	r2://account-id/bucket/prefix         Cloudflare R2 at https://<account-id>.r2.cloudflarestorage.com,
//	                                      region "auto"
//
// Only the checked endpoint is used: AWS_ENDPOINT_URL in the environment is ignored, so the
// endpoint rules and WHARF_ENDPOINT_ALLOWLIST cannot be bypassed. Credentials: anonymous (none
// sent), static keys given as references (env://, file://), "role" (ECS container endpoint,
// then STS web identity, then IMDSv2; refreshed 300 s before expiry), or with none given the
// SDK's default chain (environment, profile, SSO…).
//
// # Errors
//
// SDK errors are mapped in one function (mapError) from the S3 error code and HTTP status:
//
//	NoSuchKey, 404 on a GET/HEAD of an object        store.ErrNotExist
//	NoSuchBucket, any other 404                      store.ErrBucketMissing (a HEAD 404 is
//	                                                 checked with HeadBucket)
//	412, 409 ConditionalRequestConflict,
//	404 NoSuchKey on an If-Match put                 store.ErrPreconditionFailed
//	403 AccessDenied, InvalidAccessKeyId,
//	SignatureDoesNotMatch, no credentials            store.ErrForbidden
//	501 NotImplemented                               store.ErrUnsupported
//	429, 500, 502, 503, 504, SlowDown                store.ErrUnavailable, FaultThrottled
//	reset, timeout, truncated body                   store.ErrUnavailable, FaultTransport
//	role credentials from no source                  store.ErrRoleUnavailable, naming each source
//
// Every *store.Error carries the HTTP status and S3 code. The caller's context error passes
// through unwrapped. No error or log line holds a credential.
package s3
