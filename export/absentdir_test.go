package export

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/wharfdata/wharf/store/driver"
)

// noWrite is a store whose writes fail before they reach the directory (which the first of
// them would make): a run fails after journaling its plan and before its local destination
// directory exists, as a run killed at that point does.
type noWrite struct{ driver.Bucket }

func (n noWrite) Unwrap() driver.Bucket { return n.Bucket }
func (n noWrite) Put(context.Context, string, io.Reader, *driver.PutOptions) (driver.ObjectInfo, error) {
	return driver.ObjectInfo{}, errors.New("injected: no directory")
}

// TestResumeBeforeDirectoryExists resumes (and resumes a fresh export) at a local destination
// whose directory was never made: nothing is there, so both run, never BUCKET_MISSING.
func TestResumeBeforeDirectoryExists(t *testing.T) {
	f := newFixture(t, 30, 10)
	o := f.opts()
	o.Resume = true
	if _, err := f.run(t, o); err != nil { // --resume with nothing to resume: a plain run
		t.Fatalf("resume of a fresh export: %v", err)
	}
	f = newFixture(t, 30, 10)
	o = f.opts()
	f.exp.Store.Wrap = func(b driver.Bucket) driver.Bucket { return noWrite{b} }
	if _, err := f.run(t, o); err == nil {
		t.Fatal("the injected failure did not fail the run")
	}
	if _, err := os.Stat(f.prefix()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the destination directory exists after the failure: %v", err)
	}
	f.exp.Store.Wrap = nil
	o = f.opts()
	o.Resume = true
	res, err := f.run(t, o)
	if err != nil || !res.Resumed || res.Rows != 30 {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if v := f.validate(t, true); !v.Certified {
		t.Errorf("not certified after the resume: %+v", v.Problems)
	}
}
