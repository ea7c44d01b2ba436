package s3

import (
	"errors"
	"io"
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/wharfdata/wharf/store/driver"
)

// What a bucket knows of its server's checksum headers (Bucket.checksums).
const (
	checksumsUntried int32 = iota // none sent yet: the next put sends them
	checksumsTaken                // the server took one
	checksumsRefused              // the server refused one: puts go without them
)

// sendChecksums reports whether the next put sends x-amz-checksum-crc32c. A server that
// refused one (checksumRefused) is sent none again by this Bucket, so that zero
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

// checksumRefused reports whether err is a server's refusal of the checksum headers
// themselves (501 Not Implemented, or a 400 that names a checksum header or algorithm),
// not a checksum that did not match (XAmzContentChecksumMismatch, BadDigest).
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

// withCRCMeta returns md with wharf-crc32c set to crc, leaving md itself as it was.
func withCRCMeta(md map[string]string, crc string) map[string]string {
	if crc == "" {
		return md
	}
	out := maps.Clone(md)
	if out == nil {
		out = map[string]string{}
	}
	out[driver.MetaCRC32C] = crc
	return out
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
