// Package s3 is the store backend for Amazon S3 and S3-compatible stores (MinIO, SeaweedFS,
// Ceph, Cloudflare R2), over the official SDK github.com/aws/aws-sdk-go-v2/service/s3.
//
// It registers the schemes "s3" and "r2"; only cmd/wharf imports it. A Bucket implements
// driver.Bucket, driver.Copier (CopyObject, with If-None-Match/If-Match where the server honours
// them), driver.BucketMaker (CreateBucket; a bucket already owned by the caller is success),
// driver.BatchDeleter (DeleteMany over DeleteObjects, for recursive removal),
// driver.BucketLister and driver.UploadLister.
//
// The SDK's own retries are off: a Bucket makes one HTTP request per call, over the HTTP
// client of driver.NewHTTPClient, and the portable store (store.Store) applies the one retry policy. A put
// larger than 16 MiB (or of unknown size beyond one part) goes multipart: parts of PartSize
// (default 16 MiB, at least 5 MiB), Concurrency (default 4) in flight, memory bounded by
// Concurrency × PartSize, each part retried alone. A body of known size that is an
// io.ReaderAt (a local file) is read in place, each part a section of it, with no buffer at
// all. The put's condition rides on
// CompleteMultipartUpload, which is never resent after a lost answer (ErrOutcomeUnknown). Any
// failure or cancellation aborts the upload: nothing stays billed. Request bodies are sent
// with an unsigned payload (no SHA-256 of the body). The SDK computes no checksum of its own
// (it computes only what an operation requires); wharf's upload engine gives each put the
// CRC-32C of its bytes, which goes in x-amz-checksum-crc32c (and in the metadata key
// wharf-crc32c, which ranged reads return too), and for an upload in parts each part's and, at
// CompleteMultipartUpload, the whole object's as a FULL_OBJECT checksum: the server refuses a
// body that does not match. A server that refuses the headers themselves (501, or a 400
// naming a checksum) is sent none again by that Bucket. Head asks for the checksum
// (x-amz-checksum-mode) and reports a full-object CRC-32C as ObjectInfo.CRC32C.
//
// The standard headers (Cache-Control, Content-Disposition, Content-Encoding,
// Content-Language) go with the content type on PutObject and CreateMultipartUpload, and Get
// and Head report them. A CopyObject keeps them with the rest (COPY); one that gives any
// attribute must replace them all (REPLACE), so it heads the source for the others and is
// pinned to the version it read (x-amz-copy-source-if-match). Reads ask for no content coding,
// so a gzip object comes back as stored.
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
// S3 requests go only to the checked endpoint: AWS_ENDPOINT_URL in the environment is ignored
// for them, so the endpoint rules and WHARF_ENDPOINT_ALLOWLIST cannot be bypassed. Credentials: anonymous (none
// sent), static keys given as references (env://, file://), "role" (below), or with none given
// the SDK's default chain (environment, profile, SSO…).
//
// # Workload-role credentials
//
// With credentials: role, keys come only from these sources, through the SDK's own providers,
// in this order; the first that answers wins, a failing or unconfigured one is passed over,
// and each has 10 s to answer:
//
//	ECS container endpoint   AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on 169.254.170.2), else
//	                         AWS_CONTAINER_CREDENTIALS_FULL_URI (https, or http to loopback or
//	                         the ECS/EKS agent addresses only), with
//	                         AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read at each fetch) or
//	                         AWS_CONTAINER_AUTHORIZATION_TOKEN
//	STS web identity         AWS_WEB_IDENTITY_TOKEN_FILE (read at each fetch) and AWS_ROLE_ARN,
//	                         AWS_ROLE_SESSION_NAME optional; AssumeRoleWithWebIdentity at the
//	                         SDK's STS endpoint (AWS_ENDPOINT_URL_STS or AWS_ENDPOINT_URL when
//	                         set: https, or http on loopback only)
//	IMDSv2                   the instance role, with a session token (never IMDSv1), at
//	                         AWS_EC2_METADATA_SERVICE_ENDPOINT when set, else 169.254.169.254;
//	                         AWS_EC2_METADATA_DISABLED=true turns it off
//
// The sources are read from the environment when the store opens. Keys are cached and
// refreshed 300 s before they expire (keys that arrive with less left are refreshed halfway to
// their expiry). A refresh asks only the source the current keys came from; if it fails while
// they are still valid, wharf logs a warning, keeps signing with them, and the next request
// tries again. While one request refreshes, others sign with the still-valid keys. Expired
// keys never sign: once they expire every source is tried again in order, and none answering
// fails the request with driver.ErrRoleUnavailable (WHARF_ROLE_UNAVAILABLE), naming each source
// and why (not configured, or its error), and when keys had expired, when. Keys or anonymous
// beside credentials: role are refused by Options.Check (WHARF_CREDENTIAL_CONFLICT).
//
// # Errors
//
// SDK errors are mapped in one function (mapError) from the S3 error code and HTTP status:
//
//	NoSuchKey, 404 on a GET/HEAD of an object        driver.ErrNotExist
//	NoSuchBucket, any other 404                      driver.ErrBucketMissing (a HEAD 404 is
//	                                                 checked with HeadBucket)
//	412, 409 ConditionalRequestConflict,
//	404 NoSuchKey on an If-Match put                 driver.ErrPreconditionFailed
//	403 AccessDenied, InvalidAccessKeyId,
//	SignatureDoesNotMatch, no credentials            driver.ErrForbidden
//	403 RequestTimeTooSkewed, and a 403 without a    driver.ErrClockSkewed, its cause a
//	code (a HEAD) whose Date is over 15 minutes      driver.SkewError (the answer's Date,
//	from the request's X-Amz-Date                    the request's X-Amz-Date)
//	501 NotImplemented                               driver.ErrUnsupported
//	429, 500, 502, 503, 504, SlowDown                driver.ErrUnavailable, FaultThrottled
//	reset, timeout, truncated body                   driver.ErrUnavailable, FaultTransport
//	role credentials from no source, or expired      driver.ErrRoleUnavailable, naming each source
//	and no source answering a refresh
//
// Every *driver.Error carries the HTTP status and S3 code. The caller's context error passes
// through unwrapped. No error or log line holds a credential.
package s3
