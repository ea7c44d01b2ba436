//go:build wharftest

package s3

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wharfdata/wharf/store/driver"
)

// This file is built only with the wharftest tag (scripts/test.sh, and the binary the
// end-to-end tests build): a release build neither reads the variable nor holds the signer.

// envTestSignSkew is WHARF_TEST_S3_SIGN_SKEW: D or D:N, a Go duration added to the time every
// request is signed with (for the first N signatures only, with :N), as a machine whose clock
// is D off would sign. The AWS SDK's own skew correction, which measures the store's Date
// against the real clock, does not undo it: a store refuses such requests for as long as the
// hook shifts them.
const envTestSignSkew = "WHARF_TEST_S3_SIGN_SKEW"

// testClientOptions returns the options of the test hooks in c's environment, or nil.
func testClientOptions(c *driver.Common) func(*s3.Options) {
	spec := c.Env(envTestSignSkew)
	d, n, _ := strings.Cut(spec, ":")
	skew, err := time.ParseDuration(d)
	if spec == "" || err != nil {
		return nil
	}
	limit, _ := strconv.ParseInt(n, 10, 64)
	return func(o *s3.Options) {
		o.HTTPSignerV4 = &skewedSigner{HTTPSignerV4: o.HTTPSignerV4, skew: skew, limit: limit}
	}
}

// skewedSigner signs with its clock shifted by skew (the first limit signatures; all when
// limit is 0).
type skewedSigner struct {
	s3.HTTPSignerV4
	skew  time.Duration
	limit int64
	n     atomic.Int64
}

func (s *skewedSigner) SignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	t time.Time, optFns ...func(*v4.SignerOptions)) error {
	if s.limit == 0 || s.n.Add(1) <= s.limit {
		t = t.Add(s.skew)
	}
	return s.HTTPSignerV4.SignHTTP(ctx, creds, r, payloadHash, service, region, t, optFns...)
}
