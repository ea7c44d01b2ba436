package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A URL that names no bucket lists the buckets, as 'aws s3 ls' does: at an S3 endpoint, in a
// GCS project, in an Azure account.
func TestE2EListBuckets(t *testing.T) {
	s3c, s3ep := minioCLI(t)
	azc, azep, az := azuriteCLI(t)
	name := randomBucket(t)
	for _, tc := range []struct {
		c      cli
		ep     []string
		bucket string
		at     []string
	}{
		{s3c, s3ep, "s3://" + name, []string{"s3://"}},
		{fakeGCSCLI(t), nil, "gs://" + name, []string{"gs://", "gs:///"}},
		{azc, azep, "az://" + az.Account + "/" + name, []string{"az://" + az.Account + "/", "az://" + az.Account}},
	} {
		w := func(args ...string) result { t.Helper(); return tc.c.run(t, append(tc.ep, args...)...) }
		w("mb", tc.bucket).must(t, 0)
		for _, at := range tc.at {
			if r := w("ls", at).must(t, 0); !strings.Contains(r.out, " "+name+"\n") {
				t.Errorf("ls %s does not list %s:\n%s", at, name, r.out)
			}
			found := false
			for line := range strings.SplitSeq(strings.TrimSpace(w("--format", "json", "ls", at).must(t, 0).out), "\n") {
				var b struct{ Name string }
				if err := json.Unmarshal([]byte(line), &b); err != nil {
					t.Fatalf("ls --format json %s: %q: %v", at, line, err)
				}
				found = found || b.Name == name
			}
			if !found {
				t.Errorf("ls --format json %s does not list %s", at, name)
			}
		}
		w("rm", "-r", "-q", tc.bucket+"/")
	}
	if r := wharf(t, "ls", "mem://"); r.code != 1 || !strings.Contains(r.err, "[WHARF_UNSUPPORTED]") {
		t.Errorf("ls mem://: %+v", r)
	}
}
