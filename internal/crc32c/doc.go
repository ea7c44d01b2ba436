// Package crc32c is the CRC-32C (Castagnoli) checksum as wharf's transfers use it: computed
// while bytes move (hash/crc32 with the processor's CRC instructions where it has them),
// combined from the checksums of consecutive pieces (parts of an upload, ranges of a
// download read at once), and written as the stores write it: the base64 of its four bytes,
// big-endian, as S3's x-amz-checksum-crc32c and Google Cloud Storage's crc32c are.
//
// Package crc32c promises that Combine(Sum(a), Sum(b), len(b)) equals Sum(a‖b) for all a and
// b, and that Parse(Format(c)) is c.
package crc32c
