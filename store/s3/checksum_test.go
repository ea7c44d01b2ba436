package s3

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/mem"
	"github.com/wharfdata/wharf/store/probe"
)

// TestProbeChecksums: the probe's checksums capability says what the server does with a put
// whose x-amz-checksum-crc32c does not match its body: MinIO and SeaweedFS refuse it (yes);
// behind a proxy that answers 501 to every checksum header, no, and the store then sends
// none, so that its puts still succeed and keep wharf-crc32c.
func TestProbeChecksums(t *testing.T) {
	refusing, via := testenv.FaultProxy(t, testenv.MinIO(t))
	refusing.Inject(faultproxy.Rule{Header: "X-Amz-Checksum-Crc32c", Fault: faultproxy.Status, Status: 501, Code: "NotImplemented"})
	for _, tc := range []struct {
		name string
		srv  testenv.S3Server
		want string
	}{
		{"minio", testenv.MinIO(t), probe.Yes},
		{"seaweedfs", testenv.SeaweedFS(t), probe.Yes},
		{"refusing proxy", via, probe.No},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := minioConfig(t, tc.srv)
			name := uniqueBucket(t)
			s, err := store.Open(context.Background(), "s3://"+name, cfg.storeConfig())
			if err != nil {
				t.Fatal(err)
			}
			if err := s.MakeBucket(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { removeBucket(t, s.Bucket().(*Bucket)) })
			res, err := probe.Run(t.Context(), s, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Capabilities[probe.CapChecksums]
			if got.Verdict != tc.want {
				t.Fatalf("checksums: %s (%s), want %s", got.Verdict, got.Evidence, tc.want)
			}
			var left []string
			for o, err := range s.Walk(t.Context(), "") {
				if err != nil {
					t.Fatal(err)
				}
				left = append(left, o.Key)
			}
			if len(left) != 0 {
				t.Errorf("the probe left %v", left)
			}
			data := []byte("after the probe")
			if _, err := s.Put(t.Context(), "k", bytes.NewReader(data), &store.PutOptions{Size: int64(len(data))}); err != nil {
				t.Fatalf("a put after the probe: %v", err)
			}
			head, err := s.Head(t.Context(), "k")
			if want := crc32c.Format(crc32c.Sum(data)); err != nil || head.CRC32C != want {
				t.Errorf("after the probe: head CRC-32C %q, %v; want %s", head.CRC32C, err, want)
			}
			if sent := s.Bucket().(*Bucket).ChecksumsSent(); (sent == "yes") != (tc.want == probe.Yes) || !strings.Contains("yes no", sent) || sent == "" {
				t.Errorf("after the probe the bucket sends checksums: %q, want %s", sent, map[bool]string{true: "yes", false: "no"}[tc.want == probe.Yes])
			}
		})
	}
}

// TestProbeReportsNoChecksumsWhereNoneAreSent: a store whose puts send no checksum for the
// server to check (mem here) reports no checksums capability at all.
func TestProbeReportsNoChecksumsWhereNoneAreSent(t *testing.T) {
	s, err := store.Open(context.Background(), "mem://probe-no-checksums", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := probe.Run(t.Context(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := res.Capabilities[probe.CapChecksums]; ok {
		t.Errorf("mem reported checksums %+v, want no verdict", c)
	}
}
