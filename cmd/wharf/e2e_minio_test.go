package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
)

// minioCLI returns a cli whose child processes reach MinIO the way a user would: keys in
// AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, and the endpoint by --endpoint (endpointArgs).
func minioCLI(t *testing.T) (cli, []string) {
	srv := testenv.MinIO(t)
	c := cli{env: []string{
		"AWS_ACCESS_KEY_ID=" + srv.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + srv.SecretKey,
		"AWS_REGION=" + srv.Region,
	}}
	return c, []string{"--endpoint", srv.Endpoint}
}

func randomBucket(t *testing.T) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "wharf-cli-" + hex.EncodeToString(b[:])
}

func TestE2EMinIO(t *testing.T) {
	c, ep := minioCLI(t)
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	bucket := "s3://" + randomBucket(t)
	local := t.TempDir()
	writeFiles(t, local, map[string]string{"orders.csv": "id,amount\n1,100\n"})

	if r := w("mb", bucket).must(t, 0); !strings.Contains(r.out, "made bucket "+bucket) {
		t.Errorf("mb said %q", r.out)
	}
	w("mb", bucket).must(t, 0) // ours already: fine
	w("cp", filepath.Join(local, "orders.csv"), bucket+"/in/").must(t, 0)
	w("cp", filepath.Join(local, "orders.csv"), bucket+"/in/2024/again.csv").must(t, 0)

	if r := w("ls", bucket+"/in/").must(t, 0); !slicesEqual(lastFields(r.out), []string{"2024/", "orders.csv"}) {
		t.Errorf("ls in/:\n%s", r.out)
	}
	if r := w("ls", "-r", bucket).must(t, 0); !slicesEqual(lastFields(r.out), []string{"in/2024/again.csv", "in/orders.csv"}) {
		t.Errorf("ls -r:\n%s", r.out)
	}
	if r := w("cat", bucket+"/in/orders.csv").must(t, 0); r.out != "id,amount\n1,100\n" {
		t.Errorf("cat = %q", r.out)
	}
	r := w("stat", "--format", "json", bucket+"/in/orders.csv").must(t, 0)
	var info struct {
		Key, ETag   string
		Size        int64
		ContentType string `json:"content_type"`
	}
	if err := json.Unmarshal([]byte(r.out), &info); err != nil || info.Size != 16 || info.ETag == "" || info.ContentType != "text/csv; charset=utf-8" {
		t.Errorf("stat json %q: %+v %v", r.out, info, err)
	}
	w("cp", bucket+"/in/orders.csv", local+"/down/").must(t, 0)
	if got := readFile(t, filepath.Join(local, "down", "orders.csv")); got != "id,amount\n1,100\n" {
		t.Errorf("downloaded %q", got)
	}
	r = w("cp", "--if-absent", filepath.Join(local, "orders.csv"), bucket+"/in/orders.csv").must(t, 1)
	if !strings.Contains(r.err, "[WHARF_PRECONDITION_FAILED]") {
		t.Errorf("--if-absent on an existing key: %q", r.err)
	}
	r = w("probe", "--format", "json", bucket+"/probe-here/").must(t, 0)
	var res struct{ Coordination string }
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.Coordination != "cas" {
		t.Errorf("probe on MinIO %q: %+v %v", r.out, res, err)
	}
}

func TestE2EMinIOMissingBucket(t *testing.T) {
	c, ep := minioCLI(t)
	name := randomBucket(t)
	for _, argv := range [][]string{{"ls", "s3://" + name + "/"}, {"cat", "s3://" + name + "/k"}, {"stat", "s3://" + name + "/k"}} {
		r := c.run(t, append(ep, argv...)...)
		if r.code != 1 || !strings.Contains(r.err, "[WHARF_BUCKET_MISSING]") || !strings.Contains(r.err, name) {
			t.Errorf("wharf %v: exit %d stderr %q; want exit 1, WHARF_BUCKET_MISSING naming %s", argv, r.code, r.err, name)
		}
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }
