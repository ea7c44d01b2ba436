package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
)

// cloudSequence runs the object commands a new user tries first against root (a bucket or
// container URL that does not exist yet) with c and the global args ep, and checks each.
func cloudSequence(t *testing.T, c cli, ep []string, root string) {
	t.Helper()
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	local := t.TempDir()
	writeFiles(t, local, map[string]string{"orders.csv": "id,amount\n1,100\n", "tree/a.txt": "a", "tree/sub/b.txt": "bb"})

	if r := w("ls", root+"/"); r.code != 1 || !strings.Contains(r.err, "[WHARF_BUCKET_MISSING]") {
		t.Errorf("ls of a missing bucket: exit %d, %q", r.code, r.err)
	}
	w("mb", root).must(t, 0)
	w("cp", filepath.Join(local, "orders.csv"), root+"/in/").must(t, 0)
	w("cp", "-r", filepath.Join(local, "tree"), root+"/in/tree/").must(t, 0)
	if r := w("ls", root+"/in/").must(t, 0); !slicesEqual(lastFields(r.out), []string{"tree/", "orders.csv"}) {
		t.Errorf("ls in/:\n%s", r.out)
	}
	if r := w("ls", "-r", root).must(t, 0); !slicesEqual(lastFields(r.out), []string{"in/orders.csv", "in/tree/a.txt", "in/tree/sub/b.txt"}) {
		t.Errorf("ls -r:\n%s", r.out)
	}
	if r := w("cat", root+"/in/orders.csv").must(t, 0); r.out != "id,amount\n1,100\n" {
		t.Errorf("cat = %q", r.out)
	}
	var info struct {
		Size int64
		ETag string
	}
	r := w("stat", "--format", "json", root+"/in/orders.csv").must(t, 0)
	if err := json.Unmarshal([]byte(r.out), &info); err != nil || info.Size != 16 || info.ETag == "" {
		t.Errorf("stat: %q %+v %v", r.out, info, err)
	}
	down := t.TempDir()
	w("cp", "-r", root+"/in/", down+"/").must(t, 0)
	if got := readFile(t, filepath.Join(down, "tree", "sub", "b.txt")); got != "bb" {
		t.Errorf("downloaded tree/sub/b.txt = %q", got)
	}
	r = w("cp", "--if-absent", filepath.Join(local, "orders.csv"), root+"/in/orders.csv").must(t, 1)
	if !strings.Contains(r.err, "[WHARF_PRECONDITION_FAILED]") {
		t.Errorf("--if-absent on an existing key: %q", r.err)
	}
	if r := w("cat", root+"/in/missing.csv").must(t, 1); !strings.Contains(r.err, "[WHARF_NOT_FOUND]") {
		t.Errorf("cat of a missing key: %q", r.err)
	}
	w("rm", root+"/in/orders.csv").must(t, 0)
	w("rm", "-r", "--dry-run", root+"/in/tree/").must(t, 0)
	if r := w("ls", "-r", root).must(t, 0); len(lastFields(r.out)) != 2 {
		t.Errorf("after rm and a dry run:\n%s", r.out)
	}
	w("rm", "-r", root+"/in/").must(t, 0)
	if r := w("ls", "-r", root).must(t, 0); strings.TrimSpace(r.out) != "" {
		t.Errorf("after rm -r:\n%s", r.out)
	}
	var res struct{ Coordination string }
	r = w("probe", "--format", "json", root+"/probe/").must(t, 0)
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.Coordination == "" {
		t.Errorf("probe: %q %v", r.out, err)
	}
	t.Logf("probe of %s: coordination %s", root, res.Coordination)
}

// azuriteCLI reaches Azurite the way Azure's own CLI users do: AZURE_STORAGE_ACCOUNT and
// AZURE_STORAGE_KEY, and the endpoint by --endpoint.
func azuriteCLI(t *testing.T) (cli, []string, testenv.AzureServer) {
	srv := testenv.Azurite(t)
	return cli{env: []string{"AZURE_STORAGE_ACCOUNT=" + srv.Account, "AZURE_STORAGE_KEY=" + srv.Key}},
		[]string{"--endpoint", srv.Endpoint}, srv
}

func TestE2EAzurite(t *testing.T) {
	c, ep, srv := azuriteCLI(t)
	cloudSequence(t, c, ep, "az://"+srv.Account+"/"+randomBucket(t))
}

// The well-known development connection string alone is enough.
func TestE2EAzuriteConnectionString(t *testing.T) {
	srv := testenv.Azurite(t)
	cs := "DefaultEndpointsProtocol=http;AccountName=" + testenv.AzuriteDevAccount + ";AccountKey=" +
		testenv.AzuriteDevKey + ";BlobEndpoint=" + srv.Endpoint + "/" + testenv.AzuriteDevAccount + ";"
	c := cli{env: []string{"AZURE_STORAGE_CONNECTION_STRING=" + cs}}
	root := "az://" + testenv.AzuriteDevAccount + "/" + randomBucket(t)
	c.run(t, "mb", root).must(t, 0)
	c.run(t, "cp", "-", root+"/hello.txt").must(t, 0)
	if r := c.run(t, "ls", root).must(t, 0); !slicesEqual(lastFields(r.out), []string{"hello.txt"}) {
		t.Errorf("ls:\n%s", r.out)
	}
}

// fakeGCSCLI reaches fake-gcs-server the way gcloud users reach an emulator:
// STORAGE_EMULATOR_HOST, and no credentials.
func fakeGCSCLI(t *testing.T) cli {
	srv := testenv.FakeGCS(t)
	return cli{env: []string{"STORAGE_EMULATOR_HOST=" + srv.Endpoint}}
}

func TestE2EFakeGCS(t *testing.T) {
	cloudSequence(t, fakeGCSCLI(t), nil, "gs://"+randomBucket(t))
}

// cp streams between any two stores: MinIO to fake-gcs-server to Azurite and back, each a
// named store of the config file with its own endpoint and credentials.
func TestE2ECopyAcrossClouds(t *testing.T) {
	minio, gcs, az := testenv.MinIO(t), testenv.FakeGCS(t), testenv.Azurite(t)
	ak, sk := minio.Refs(t)
	cfg := writeConfig(t, fmt.Sprintf(`stores:
  minio: {backend: s3, endpoint: %s, region: %s, access_key_id: %s, secret_access_key: %s}
  fake: {backend: gs, endpoint: %s, anonymous: true}
  azurite: {backend: az, endpoint: %s, account_key: %s}
`, minio.Endpoint, minio.Region, ak, sk, gcs.Endpoint, az.Endpoint, az.KeyRef(t)))
	c := cli{}
	name := randomBucket(t)
	s3 := "minio://" + name
	gs := "fake://" + name
	azu := "azurite://" + az.Account + "/" + name
	run := func(args ...string) result { return c.run(t, append([]string{"-c", cfg}, args...)...) }
	for _, u := range []string{s3, gs, azu} {
		run("mb", u).must(t, 0)
	}
	local := t.TempDir()
	big := strings.Repeat("0123456789abcdef", 1<<20) // 16 MiB: parts, chunks and blocks
	writeFiles(t, local, map[string]string{"d/big.bin": big, "d/small #1.txt": "small"})
	at := func(u, key string) string { return u + "/" + key }

	run("cp", "-r", filepath.Join(local, "d"), at(s3, "d/")).must(t, 0)
	run("cp", "-r", at(s3, "d/"), at(gs, "d/")).must(t, 0)
	run("cp", "-r", at(gs, "d/"), at(azu, "d/")).must(t, 0)
	run("cp", at(azu, "d/big.bin"), at(s3, "back/big.bin")).must(t, 0)
	down := t.TempDir()
	run("cp", "-r", at(azu, "d/"), down+"/").must(t, 0)
	if got := readFile(t, filepath.Join(down, "big.bin")); got != big {
		t.Errorf("big.bin after S3 -> GCS -> Azure differs (%d bytes)", len(got))
	}
	if got := readFile(t, filepath.Join(down, "small #1.txt")); got != "small" {
		t.Errorf("small #1.txt after S3 -> GCS -> Azure = %q", got)
	}
	if r := run("stat", "--format", "json", at(s3, "back/big.bin")).must(t, 0); !strings.Contains(r.out, `"size":16777216`) {
		t.Errorf("back on S3: %s", r.out)
	}
}
