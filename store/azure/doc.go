// Package azure is the store backend for Azure Blob Storage and its emulator Azurite, over the
// official SDK github.com/Azure/azure-sdk-for-go/sdk/storage/azblob.
//
// It registers the scheme "az"; only cmd/wharf imports it. A Container implements
// driver.Bucket, driver.Copier (Copy Blob, with If-None-Match/If-Match on the destination),
// driver.BucketMaker (Create Container; one that exists in the account is success),
// driver.BatchDeleter (blob batch, 256 deletes a request), driver.BucketLister and
// driver.UploadLister.
//
// The SDK's own retries are off: a Container makes one HTTP request per SDK call, over the HTTP
// client of driver.NewHTTPClient (so each attempt's response timeout applies), and the portable
// store (store.Store) applies the one retry policy. Every request asks for no content coding: Go's transport
// would otherwise decompress a blob stored with Content-Encoding: gzip. The standard headers go
// with the content type on Put Blob and Put Block List and come back from Get and Head; Copy
// Blob keeps them but cannot set them, so a copy that gives headers or a content type streams
// through Get and Put. A put whose known size fits in one block (PartSize,
// default 16 MiB, at least 1 MiB) goes in one Put Blob, streamed; a larger or unknown-size body
// is staged in blocks (Put Block): Concurrency blocks (default 4) in flight, memory bounded by
// Concurrency × PartSize, each block retried alone; then one Put Block List commits them,
// carrying the put's condition — If-None-Match * for create-if-absent, If-Match for
// replace-if-match — so a large conditional put keeps its condition at the step that makes it
// visible. A conditional commit is never resent after a lost answer (ErrOutcomeUnknown).
//
// On any failure or cancellation nothing is committed: the object at the key is untouched
// (absent, or its old content). Azure has no call that discards staged blocks, so a failed
// upload's blocks stay uncommitted — invisible, unlisted, not part of any blob — until the next
// commit to the key discards them, or Azure garbage-collects them after a week. Block ids are
// random per upload, so two uploads never mix blocks; but a commit to a key discards every
// other upload's staged blocks there, so of two large puts racing on one key the later commit
// fails (InvalidBlockList): ErrPreconditionFailed for a conditional put, ErrUnavailable for an
// unconditional one.
//
// # URLs
//
//	az://account/container/prefix         https://account.blob.core.windows.net/container/prefix
//	az://account/container/prefix?endpoint=http://127.0.0.1:10000
//	                                      Azurite or another endpoint, path-style:
//	                                      {endpoint}/{account}/{container}/…; an endpoint whose
//	                                      host is the account's own ({account}.…, a private
//	                                      endpoint or another cloud) is used as the service URL
//
// Account names are 3 to 24 lowercase letters and digits, container names 3 to 63 lowercase
// letters, digits and single dashes: others are WHARF_CONFIG_INVALID before any request.
//
// # Credentials
//
// The first that applies wins:
//
//  1. the config: anonymous (no credentials sent), account_key (a shared key) or sas_token (a
//     SAS token, with or without its leading '?'), both given as references (env://, file://).
//     account_key and sas_token together, or anonymous with either, are
//     WHARF_CREDENTIAL_CONFLICT (Options.Check).
//  2. AZURE_STORAGE_CONNECTION_STRING: AccountName, AccountKey or SharedAccessSignature,
//     BlobEndpoint (or DefaultEndpointsProtocol and EndpointSuffix), and
//     UseDevelopmentStorage=true (Azurite's development account at http://127.0.0.1:10000,
//     or DevelopmentStorageProxyUri). Its endpoint is used unless the config names one, and
//     passes the same checks (plaintext only on loopback, WHARF_ENDPOINT_ALLOWLIST).
//  3. AZURE_STORAGE_KEY, the key of the URL's account.
//  4. AZURE_STORAGE_SAS_TOKEN.
//
// When AZURE_STORAGE_ACCOUNT (with 3 or 4) or the connection string's AccountName names
// another account than the URL, the environment's credentials are refused
// (WHARF_CREDENTIAL_CONFLICT) rather than sent to the wrong account. With none of these,
// Open fails with WHARF_CONFIG_INVALID naming what to set. A malformed key or SAS token is
// WHARF_CONFIG_INVALID naming the field or variable, never its value.
//
// # Metadata
//
// Azure metadata names must be C# identifiers, and the Go SDK hands them back capitalised.
// The contract's keys (lowercase letters, digits, dashes) are written with each '-' as '_'
// (wharf-sha256 ↔ wharf_sha256); any other key (one with '_', say) is written escaped: a
// leading '_', letters and digits as themselves, every other byte as '_' and two hex digits
// (my_key ↔ _my_5fkey). Names are lowercased and decoded on the way back, so every key
// round-trips. A name another tool wrote is read with each '_' as '-'.
//
// # Errors
//
// SDK errors are mapped in one function (mapError) from the Azure error code and HTTP status:
//
//	BlobNotFound                                     driver.ErrNotExist (ErrPreconditionFailed
//	                                                 on an If-Match put)
//	ContainerNotFound, ResourceNotFound, other 404   driver.ErrBucketMissing, naming the
//	                                                 container and account
//	409 BlobAlreadyExists, 412 ConditionNotMet,
//	TargetConditionNotMet                            driver.ErrPreconditionFailed
//	403 AuthenticationFailed, Authorization*,
//	401 NoAuthenticationInformation                  driver.ErrForbidden, naming the operation,
//	                                                 how the store authenticated, and the SAS
//	                                                 token's expiry when it has passed
//	such a 403 whose Date is over 15 minutes from    driver.ErrClockSkewed, its cause a
//	the request's x-ms-date ("Request date header    driver.SkewError naming both times
//	too old")
//	InvalidMetadata                                  driver.ErrKeyInvalid
//	501, 405, Unsupported*                           driver.ErrUnsupported
//	429, 500, 503, ServerBusy, InternalError,
//	OperationTimedOut                                driver.ErrUnavailable, FaultThrottled
//	reset, timeout, truncated body                   driver.ErrUnavailable, FaultTransport
//
// Every *driver.Error carries the HTTP status and Azure code. The caller's context error passes
// through unwrapped. An error's text is rebuilt from the method, path, status, code and the
// service's message; it never holds the account key, the SAS token or its signature (the
// SDK's transport errors quote the request URL, SAS included: wharf drops that URL).
package azure
