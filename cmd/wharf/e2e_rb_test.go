package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// rbSequence: rb refuses a bucket holding an object and leaves it as it is; rb --force
// empties it, counting what it removed, and removes it; a missing bucket is
// WHARF_BUCKET_MISSING; an empty one goes without --force; a key is refused (exit 2).
func rbSequence(t *testing.T, c cli, ep []string, root string) {
	t.Helper()
	w := func(args ...string) result { t.Helper(); return c.run(t, append(ep, args...)...) }
	local := t.TempDir()
	writeFiles(t, local, map[string]string{"a.txt": "a", "d/b.txt": "b"})
	w("mb", root).must(t, 0)
	w("cp", "-r", local, root+"/in/").must(t, 0)

	if r := w("rb", root+"/in/"); r.code != 2 {
		t.Errorf("rb of a prefix: exit %d, stderr %q; want 2", r.code, r.err)
	}
	if r := w("rb", root); r.code != 1 || !strings.Contains(r.err, "[WHARF_BUCKET_NOT_EMPTY]") {
		t.Fatalf("rb of a bucket holding objects: exit %d, stderr %q", r.code, r.err)
	}
	if got := w("cat", root+"/in/d/b.txt").must(t, 0).out; got != "b" {
		t.Fatalf("after a refused rb, in/d/b.txt holds %q", got)
	}
	var res rbResult
	r := w("--format", "json", "rb", "--force", root).must(t, 0)
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.Objects != 2 {
		t.Fatalf("rb --force printed %q (%v); want 2 objects removed", r.out, err)
	}
	if r := w("ls", root+"/"); r.code != 1 || !strings.Contains(r.err, "[WHARF_BUCKET_MISSING]") {
		t.Errorf("ls after rb --force: exit %d, stderr %q; want WHARF_BUCKET_MISSING", r.code, r.err)
	}
	if r := w("rb", root); r.code != 1 || !strings.Contains(r.err, "[WHARF_BUCKET_MISSING]") {
		t.Errorf("rb of a missing bucket: exit %d, stderr %q", r.code, r.err)
	}
	w("mb", root).must(t, 0)
	if r := w("rb", root).must(t, 0); !strings.HasPrefix(r.out, "removed bucket ") {
		t.Errorf("rb of an empty bucket printed %q", r.out)
	}
}

func TestE2EMinIORemoveBucket(t *testing.T) {
	c, ep := minioCLI(t)
	rbSequence(t, c, ep, "s3://"+randomBucket(t))
}

func TestE2EFakeGCSRemoveBucket(t *testing.T) {
	rbSequence(t, fakeGCSCLI(t), nil, "gs://"+randomBucket(t))
}

func TestE2EAzuriteRemoveBucket(t *testing.T) {
	c, ep, srv := azuriteCLI(t)
	rbSequence(t, c, ep, "az://"+srv.Account+"/"+randomBucket(t))
}

func TestE2EFileStoreRemoveBucket(t *testing.T) {
	rbSequence(t, cli{}, nil, filepath.Join(t.TempDir(), "store"))
}
