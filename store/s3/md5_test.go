package s3

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestContentMD5: an ETag vouches for the bytes' MD5 only for an object put whole and not
// encrypted with a KMS or customer key.
func TestContentMD5(t *testing.T) {
	md5 := "0123456789abcdef0123456789ABCDEF"
	for _, tc := range []struct {
		etag     string
		sse      types.ServerSideEncryption
		customer *string
		want     string
	}{
		{md5, "", nil, strings.ToLower(md5)},
		{md5, types.ServerSideEncryptionAes256, nil, strings.ToLower(md5)},
		{md5, types.ServerSideEncryptionAwsKms, nil, ""},
		{md5, types.ServerSideEncryptionAwsKmsDsse, nil, ""},
		{md5, "", aws.String("AES256"), ""},
		{"0123456789abcdef0123456789abcdef-3", "", nil, ""},
		{"zz23456789abcdef0123456789abcdef", "", nil, ""},
	} {
		if got := contentMD5(tc.etag, tc.sse, tc.customer); got != tc.want {
			t.Errorf("contentMD5(%q, %q, %v) = %q, want %q", tc.etag, tc.sse, aws.ToString(tc.customer), got, tc.want)
		}
	}
}
