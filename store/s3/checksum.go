package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store/driver"
)

// What a bucket knows of its server's checksum headers (Bucket.checksums).
const (
	checksumsUntried int32 = iota // none sent yet: the next put sends them
	checksumsTaken                // the server took one
	checksumsRefused              // the server refused one: puts go without them
)

// sendChecksums reports whether the next put sends x-amz-checksum-crc32c. A server that
// refused one (checksumRefused, and took the same request without it) is sent none again by
// this Bucket, so that zero
// configuration works on a store that rejects checksum headers; its objects are still
// checked on download where they carry wharf-crc32c.
func (b *Bucket) sendChecksums() bool { return b.checksums.Load() != checksumsRefused }

// ChecksumsSent reports what this bucket learned of its server: "yes" once the server took a
// checksum header, "no" once it refused one, "" before either.
func (b *Bucket) ChecksumsSent() string {
	switch b.checksums.Load() {
	case checksumsTaken:
		return "yes"
	case checksumsRefused:
		return "no"
	}
	return ""
}

// tookChecksum notes that a request carrying a checksum header succeeded.
func (b *Bucket) tookChecksum() { b.checksums.CompareAndSwap(checksumsUntried, checksumsTaken) }

// refuseChecksums notes that the server refused a checksum header, and says so once.
func (b *Bucket) refuseChecksums(err error) {
	if b.checksums.Swap(checksumsRefused) != checksumsRefused {
		b.log.Warn("the store refuses S3 checksum headers: objects are sent without them, and their CRC-32C is kept in metadata where the put knows it first",
			"bucket", b.bucket, "answer", err.Error())
	}
}

// checksumRefused reports whether err may be a server's refusal of the checksum headers
// themselves (501 Not Implemented, or a 400 that names a checksum header or algorithm),
// not a checksum that did not match (XAmzContentChecksumMismatch, BadDigest). A 501 may
// refuse something else the request asks (an encryption without a KMS): the request is sent
// again without the checksum, and only when that one is taken is the refusal learned.
func checksumRefused(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	switch api.ErrorCode() {
	case "XAmzContentChecksumMismatch", "BadDigest", "InvalidDigest":
		return false
	case "NotImplemented":
		return true
	case "InvalidRequest", "InvalidArgument", "UnsupportedArgument", "InvalidChecksum":
		return strings.Contains(strings.ToLower(api.ErrorMessage()), "checksum")
	}
	return false
}

// fullCRC returns an answer's CRC-32C when it is the whole object's: a full-object checksum,
// never one composed of its parts' ("…-N").
func fullCRC(crc *string, kind types.ChecksumType) string {
	if crc == nil || strings.Contains(*crc, "-") || kind == types.ChecksumTypeComposite {
		return ""
	}
	return *crc
}

// rewind moves body back to pos, for a put sent again without its checksum header.
func rewind(body io.Reader, pos int64) bool {
	s, ok := body.(io.Seeker)
	if !ok {
		return false
	}
	_, err := s.Seek(pos, io.SeekStart)
	return err == nil
}

var _ driver.ChecksumChecker = (*Bucket)(nil)

// CheckChecksums puts "wharf checksum probe" at key with the CRC-32C of other bytes, and
// deletes it if the server stored it. A server that checks answers 400
// (XAmzContentChecksumMismatch, BadDigest); one that refuses the header answers 501 or a 400
// naming it (and this Bucket sends none from then on); one that stores the body ignored it.
func (b *Bucket) CheckChecksums(ctx context.Context, key string) (bool, string, error) {
	body := []byte("wharf checksum probe")
	wrong := crc32c.Format(crc32c.Sum([]byte("other bytes")))
	_, err := b.api.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(b.bucket), Key: aws.String(key), Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ChecksumCRC32C: aws.String(wrong),
	})
	var api smithy.APIError
	switch {
	case err == nil:
		_, derr := b.api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)})
		if derr != nil {
			b.log.Warn("deleting the checksum probe's object failed", "bucket", b.bucket, "key", key, "error", derr)
		}
		return false, "a put whose x-amz-checksum-crc32c does not match its body was stored: the server ignores the header", nil
	case checksumRefused(err):
		b.refuseChecksums(err)
		return false, "the server refuses checksum headers (" + answer(err) + "): puts go without them", nil
	case errors.As(err, &api) && (api.ErrorCode() == "XAmzContentChecksumMismatch" || api.ErrorCode() == "BadDigest"):
		b.tookChecksum()
		return true, "a put whose x-amz-checksum-crc32c does not match its body was refused (" + answer(err) + ")", nil
	}
	return false, "", mapError(ctx, call{op: "put", key: key}, err)
}

// answer names an S3 error answer: "HTTP 400 BadDigest".
func answer(err error) string {
	var re *awshttp.ResponseError
	code := ""
	var api smithy.APIError
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	if errors.As(err, &re) {
		return fmt.Sprintf("HTTP %d %s", re.HTTPStatusCode(), code)
	}
	return code
}
