package dataset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// The parts are checked several at once, and their problems come out in the manifest's part
// order all the same; a validation stopped before every part was checked certifies nothing.
func TestPartsCheckedAtOnceKeepTheirOrder(t *testing.T) {
	ctx := context.Background()
	s := store.New(mem.New(), nil)
	m := &Manifest{ManifestVersion: ManifestVersion, RunID: "r", Status: StatusSucceeded, Format: FormatLines,
		SchemaFingerprint: SchemaFingerprint(nil)}
	for i := range 40 {
		key := fmt.Sprintf("part-%02d.ndjson", i)
		info, err := s.Put(ctx, key, strings.NewReader(fmt.Sprintf("{\"i\":%d}\n", i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		m.Parts = append(m.Parts, Part{Key: key, Rows: 1, Size: info.Size, ETag: info.ETag, SHA256: mustHash(t, s, key)})
		m.Rows++
	}
	put(t, s, m)
	if v, err := Validate(ctx, s, "mem://x/", false); err != nil || !v.Certified {
		t.Fatalf("every part whole: %v %+v", err, v)
	}
	var want []string
	for _, i := range []int{3, 17, 18, 39} {
		key := m.Parts[i].Key
		if err := s.Delete(ctx, key, nil); err != nil {
			t.Fatal(err)
		}
		want = append(want, key)
	}
	v, err := Validate(ctx, s, "mem://x/", false)
	if err != nil || v.Certified {
		t.Fatalf("four parts deleted: %v %+v", err, v)
	}
	var got []string
	for _, p := range v.Problems {
		if p.Code == ProblemPartMissing {
			got = append(got, p.Key)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("missing parts reported %v, want %v in the manifest's order", got, want)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if v, err := Validate(cancelled, s, "mem://x/", false); err == nil || (v != nil && v.Certified) || !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled validation: %v %+v", err, v)
	}
}
