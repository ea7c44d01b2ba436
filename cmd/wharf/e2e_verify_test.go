package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
)

// verifyFixture uploads small.txt (100 KiB) and big.bin (22 MiB, sent in 5 MiB parts) to a
// new MinIO bucket straight, with no proxy, and returns their bytes and the bucket's URL.
func verifyFixture(t *testing.T, c cli, ep []string) (small, big []byte, bucket string) {
	t.Helper()
	bucket = "s3://" + randomBucket(t)
	c.run(t, append(ep, "mb", bucket)...).must(t, 0)
	dir := t.TempDir()
	small, big = make([]byte, 100<<10), make([]byte, 22<<20)
	_, _ = rand.Read(small)
	_, _ = rand.Read(big)
	for name, b := range map[string][]byte{"small.txt": small, "big.bin": big} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.run(t, append(ep, "cp", "-r", "--part-size", "5MiB", dir+"/", bucket+"/in/")...).must(t, 0)
	return small, big, bucket
}

// wantNothingAt fails t when dir holds any entry: a refused download leaves no file and no
// temporary file.
func wantNothingAt(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left in %s after a refused download: %s", dir, e.Name())
	}
}

// TestE2EVerifiedTransfersOnMinIO: cp sends each object's CRC-32C, which MinIO checks and
// keeps (a full-object checksum for one sent in parts, wharf-crc32c in the metadata as well
// for one sent whole); a download checks the bytes it reads against it, so a byte flipped by
// a proxy on the way (in a whole read, in one range of a parallel download, in a copy
// between stores) fails the copy with WHARF_CHECKSUM_MISMATCH naming the object, and leaves
// nothing at the destination. Without the fault, everything reads back verified.
func TestE2EVerifiedTransfersOnMinIO(t *testing.T) {
	c, ep := minioCLI(t)
	srv := testenv.MinIO(t)
	small, big, bucket := verifyFixture(t, c, ep)
	name := strings.TrimPrefix(bucket, "s3://")

	api := s3Client(srv)
	head, err := api.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(name),
		Key: aws.String("in/big.bin"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if want := crc32c.Format(crc32c.Sum(big)); aws.ToString(head.ChecksumCRC32C) != want || head.ChecksumType != types.ChecksumTypeFullObject {
		t.Errorf("big.bin as MinIO keeps it: CRC-32C %q (%s), want %s FULL_OBJECT",
			aws.ToString(head.ChecksumCRC32C), head.ChecksumType, want)
	}
	head, err = api.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(name),
		Key: aws.String("in/small.txt"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	want := crc32c.Format(crc32c.Sum(small))
	if aws.ToString(head.ChecksumCRC32C) != want || head.Metadata["wharf-crc32c"] != want {
		t.Errorf("small.txt: CRC-32C %q, wharf-crc32c %q, want %s for both",
			aws.ToString(head.ChecksumCRC32C), head.Metadata["wharf-crc32c"], want)
	}

	proxy, via := testenv.FaultProxy(t, srv)
	pv := []string{"--endpoint", via.Endpoint}
	for _, tc := range []struct {
		name, key string
		rule      faultproxy.Rule
		args      []string
	}{
		{"whole read", "small.txt", faultproxy.Rule{Method: "GET", Path: "small.txt", Fault: faultproxy.Corrupt, After: 777, Times: 1}, nil},
		// The first GET reads the first 5 MiB; the fault hits the third range.
		{"one range of a parallel download", "big.bin", faultproxy.Rule{Method: "GET", Path: "big.bin", Skip: 2, Fault: faultproxy.Corrupt, After: 12345, Times: 1},
			[]string{"--part-size", "5MiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			in := proxy.Inject(tc.rule)
			defer in.Remove()
			args := append(append(append([]string{}, pv...), "cp"), tc.args...)
			r := c.run(t, append(args, bucket+"/in/"+tc.key, filepath.Join(out, tc.key))...)
			if in.Fired() != 1 {
				t.Fatalf("the fault fired %d times, want 1", in.Fired())
			}
			if r.code != 1 || !strings.Contains(r.err, "WHARF_CHECKSUM_MISMATCH") || !strings.Contains(r.err, tc.key) {
				t.Errorf("a flipped byte: exit %d, stderr %q; want 1, WHARF_CHECKSUM_MISMATCH naming %s", r.code, r.err, tc.key)
			}
			wantNothingAt(t, out)
		})
	}

	t.Run("copy between stores", func(t *testing.T) {
		in := proxy.Inject(faultproxy.Rule{Method: "GET", Path: "small.txt", Fault: faultproxy.Corrupt, After: 5, Times: 1})
		defer in.Remove()
		// A content type makes the copy stream through wharf instead of the server copying.
		r := c.run(t, append(pv, "cp", "--content-type", "text/plain", bucket+"/in/small.txt", bucket+"/copy/small.txt")...)
		if in.Fired() != 1 || r.code != 1 || !strings.Contains(r.err, "WHARF_CHECKSUM_MISMATCH") {
			t.Errorf("a flipped byte in a copy between stores (fired %d): exit %d, stderr %q; want 1, WHARF_CHECKSUM_MISMATCH", in.Fired(), r.code, r.err)
		}
		if _, err := api.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(name), Key: aws.String("copy/small.txt")}); err == nil {
			t.Error("the damaged copy was committed")
		}
	})

	t.Run("no fault", func(t *testing.T) {
		out := t.TempDir()
		downloadAndCount(t, c, pv, bucket, out, small, big, 2, 0)
	})
}

// TestE2EChecksumHeadersRefused: a proxy answers 501 Not Implemented to every request that
// carries an S3 checksum header, as stores that reject the SDKs' checksums do. With no
// configuration, cp learns it from the first refusal and sends the rest without them; the
// objects are whole, the one sent whole still carries wharf-crc32c and downloads verified,
// and the one sent in parts, which has no checksum then, downloads counted unverified.
func TestE2EChecksumHeadersRefused(t *testing.T) {
	c, ep := minioCLI(t)
	srv := testenv.MinIO(t)
	proxy, via := testenv.FaultProxy(t, srv)
	refuse := func(header string) *faultproxy.Injection {
		return proxy.Inject(faultproxy.Rule{Header: header, Fault: faultproxy.Status, Status: 501, Code: "NotImplemented",
			Message: "A header you provided implies functionality that is not implemented"})
	}
	whole, parts := refuse("X-Amz-Checksum-Crc32c"), refuse("X-Amz-Checksum-Algorithm")
	small, big, bucket := verifyFixture(t, c, []string{"--endpoint", via.Endpoint})
	if whole.Fired() == 0 || parts.Fired() == 0 {
		t.Fatalf("the proxy refused %d single puts and %d multipart creates; the test needs both", whole.Fired(), parts.Fired())
	}
	// small.txt is verified by its wharf-crc32c, big.bin is not.
	downloadAndCount(t, c, ep, bucket, t.TempDir(), small, big, 1, 1)
}

// downloadAndCount downloads bucket/in/ into out with cp -r and checks the files and the
// summary's verified and unverified counts.
func downloadAndCount(t *testing.T, c cli, ep []string, bucket, out string, small, big []byte, verified, unverified int) {
	t.Helper()
	r := c.run(t, append(ep, "--format", "json", "cp", "-r", "--part-size", "5MiB", bucket+"/in/", out+"/")...).must(t, 0)
	var sum struct{ Files, Verified, Unverified int }
	if err := json.Unmarshal([]byte(lastLine(r.out)), &sum); err != nil {
		t.Fatalf("summary %q: %v", r.out, err)
	}
	if sum.Files != 2 || sum.Verified != verified || sum.Unverified != unverified {
		t.Errorf("summary %+v, want 2 files, %d verified, %d unverified", sum, verified, unverified)
	}
	for name, b := range map[string][]byte{"small.txt": small, "big.bin": big} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s read back: %d bytes, %v", name, len(got), err)
		}
	}
}
