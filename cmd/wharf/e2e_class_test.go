package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
)

// statClass returns the storage_class `wharf stat --format json` shows for url.
func statClass(t *testing.T, c cli, pre []string, url string) string {
	t.Helper()
	r := c.run(t, append(append([]string{}, pre...), "--format", "json", "stat", url)...).must(t, 0)
	var info struct {
		StorageClass string `json:"storage_class"`
	}
	if err := json.Unmarshal([]byte(r.out), &info); err != nil {
		t.Fatalf("stat %s: %q: %v", url, r.out, err)
	}
	return info.StorageClass
}

// TestE2EStorageClassAndEncryption: cp --storage-class and --sse reach each store as it names
// them, and a store's refusal is named, not hidden. On MinIO (behind a proxy that records what
// it was sent): the class and the encryption go as x-amz-storage-class and
// x-amz-server-side-encryption (--sse-kms-key-id alone asks for aws:kms with the key), a
// class MinIO lacks is its InvalidStorageClass, and an encryption without a KMS its 501, which
// is not taken for a refusal of checksums (the same put without the checksum fails alike).
// On fake-gcs-server and Azurite the class reads back in stat (Azure's access tier Cool).
// Stores without classes, and Azure with an encryption, refuse before any request.
func TestE2EStorageClassAndEncryption(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(file, []byte("classy bytes\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("minio", func(t *testing.T) {
		c, ep := minioCLI(t)
		bucket := "s3://" + randomBucket(t)
		c.run(t, append(ep, "mb", bucket)...).must(t, 0)
		proxy, via := testenv.FaultProxy(t, testenv.MinIO(t))
		pv := []string{"--endpoint", via.Endpoint}
		c.run(t, append(pv, "cp", "--storage-class", "REDUCED_REDUNDANCY", file, bucket+"/rrs.txt")...).must(t, 0)
		sent := func(path, header string) string {
			for _, r := range proxy.Requests() {
				if r.Method == "PUT" && strings.HasSuffix(r.Path, path) {
					return r.Header.Get(header)
				}
			}
			return ""
		}
		if got := sent("/rrs.txt", "X-Amz-Storage-Class"); got != "REDUCED_REDUNDANCY" {
			t.Errorf("x-amz-storage-class sent: %q, want REDUCED_REDUNDANCY", got)
		}
		r := c.run(t, append(pv, "cp", "--storage-class", "DEEP_ARCHIVE", file, bucket+"/deep.txt")...)
		if r.code != 1 || !strings.Contains(r.err, "InvalidStorageClass") || !strings.Contains(r.err, "deep.txt") {
			t.Errorf("a class MinIO lacks: exit %d, stderr %q; want 1 naming InvalidStorageClass and the key", r.code, r.err)
		}
		r = c.run(t, append(pv, "cp", "--sse-kms-key-id", "my-key", file, bucket+"/kms.txt")...)
		if got := sent("/kms.txt", "X-Amz-Server-Side-Encryption"); got != "aws:kms" || sent("/kms.txt", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id") != "my-key" {
			t.Errorf("--sse-kms-key-id sent x-amz-server-side-encryption %q, key %q; want aws:kms, my-key",
				got, sent("/kms.txt", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id"))
		}
		if r.code != 1 || !strings.Contains(r.err, "KMS") || strings.Contains(r.err, "refuses S3 checksum headers") {
			t.Errorf("an encryption MinIO has no KMS for: exit %d, stderr %q; want 1 naming the KMS, no word of checksums", r.code, r.err)
		}
		r = c.run(t, append(pv, "cp", "--sse", "AES256", "--sse-kms-key-id", "k", file, bucket+"/x.txt")...)
		if r.code != 2 {
			t.Errorf("--sse AES256 with a KMS key: exit %d, want 2", r.code)
		}
	})

	t.Run("fake-gcs-server", func(t *testing.T) {
		c := fakeGCSCLI(t)
		bucket := "gs://" + randomBucket(t)
		c.run(t, "mb", bucket).must(t, 0)
		c.run(t, "cp", "--storage-class", "NEARLINE", file, bucket+"/near.txt").must(t, 0)
		if got := statClass(t, c, nil, bucket+"/near.txt"); got != "NEARLINE" {
			t.Errorf("storage class read back: %q, want NEARLINE", got)
		}
		if r := c.run(t, "cp", "--sse", "AES256", file, bucket+"/sse.txt"); r.code != 1 || !strings.Contains(r.err, "WHARF_UNSUPPORTED") {
			t.Errorf("--sse on GCS: exit %d, stderr %q; want 1, WHARF_UNSUPPORTED", r.code, r.err)
		}
	})

	t.Run("azurite", func(t *testing.T) {
		c, ep, srv := azuriteCLI(t)
		root := "az://" + srv.Account + "/" + randomBucket(t)
		c.run(t, append(ep, "mb", root)...).must(t, 0)
		c.run(t, append(ep, "cp", "--storage-class", "cool", file, root+"/cool.txt")...).must(t, 0)
		if got := statClass(t, c, ep, root+"/cool.txt"); got != "Cool" {
			t.Errorf("access tier read back: %q, want Cool", got)
		}
		if r := c.run(t, append(ep, "cp", "--storage-class", "Frozen", file, root+"/f.txt")...); r.code != 2 || !strings.Contains(r.err, "Hot, Cool, Cold and Archive") {
			t.Errorf("an access tier Azure lacks: exit %d, stderr %q; want 2 naming the tiers", r.code, r.err)
		}
		if r := c.run(t, append(ep, "cp", "--sse", "AES256", file, root+"/sse.txt")...); r.code != 1 || !strings.Contains(r.err, "WHARF_UNSUPPORTED") {
			t.Errorf("--sse on Azure: exit %d, stderr %q; want 1, WHARF_UNSUPPORTED", r.code, r.err)
		}
	})

	t.Run("file store", func(t *testing.T) {
		c := cli{}
		lake := filepath.Join(t.TempDir(), "lake")
		c.run(t, "mb", lake).must(t, 0)
		if r := c.run(t, "cp", "--storage-class", "COLD", file, lake+"/f.txt"); r.code != 1 || !strings.Contains(r.err, "WHARF_UNSUPPORTED") {
			t.Errorf("--storage-class into a file store: exit %d, stderr %q; want 1, WHARF_UNSUPPORTED", r.code, r.err)
		}
	})
}
