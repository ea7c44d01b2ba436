package backfill

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
)

// interloper puts another dataset's manifest once the sink has read the destination's: a
// writer racing the leader between its claim and its put.
type interloper struct {
	driver.Bucket
	done bool
}

func (b *interloper) Unwrap() driver.Bucket { return b.Bucket }

func (b *interloper) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	obj, err := b.Bucket.Get(ctx, key, opts)
	if key == dataset.ManifestKey && !b.done {
		b.done = true
		other := &dataset.Manifest{ManifestVersion: dataset.ManifestVersion, Export: "backfill:other", RunID: "backfill-0123456789abcdef",
			Source: "mem://elsewhere/", Status: dataset.StatusSucceeded, Schema: []dataset.SchemaColumn{}, Parts: []dataset.Part{}}
		body, _ := other.Encode()
		if _, perr := b.Bucket.Put(ctx, key, bytes.NewReader(body), &driver.PutOptions{Size: int64(len(body))}); perr != nil {
			return nil, perr
		}
	}
	return obj, err
}

// The leader writes its manifest only over what it claimed: one another writer put there
// between the claim and the put is not written over (a check followed by a plain put would
// replace it).
func TestFinishDoesNotWriteOverAManifestPutSinceItsClaim(t *testing.T) {
	for _, before := range []bool{false, true} {
		b := &interloper{Bucket: mem.New()}
		s := store.New(b, nil)
		k := NewStoreSink(s, "mem://out/", "job", "test")
		plan := &Plan{Job: "job", ID: "fedcba9876543210fedcba9876543210", Source: "mem://in/", Sink: "mem://out/", PlannedAt: time.Now()}
		if before { // the job's own manifest is there already: a replace, pinned to it
			b.done = true
			if err := k.Finish(context.Background(), &Finish{Plan: plan, Finished: time.Now()}); err != nil {
				t.Fatal(err)
			}
			b.done = false
		}
		err := k.Finish(context.Background(), &Finish{Plan: plan, Finished: time.Now()})
		if !errors.Is(err, ErrJobMismatch) {
			t.Errorf("own manifest there before: %v; finish over a manifest put since the claim: %v, want ErrJobMismatch", before, err)
		}
		obj, gerr := s.Get(context.Background(), dataset.ManifestKey, nil)
		if gerr != nil {
			t.Fatal(gerr)
		}
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(obj)
		obj.Close()
		if m, derr := dataset.DecodeManifest(buf.Bytes()); derr != nil || m.Export != "backfill:other" {
			t.Errorf("the other writer's manifest was replaced (%v)", derr)
		}
	}
}
