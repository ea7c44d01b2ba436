package backfill

import (
	"fmt"
	"strings"

	"github.com/wharfdata/wharf/store"
)

// Apart refuses a store whose objects a listing of the source could read: other (the
// destination, or the bucket coordinator's records) opened at its prefix, and the source src
// (opened at its bucket's root) read at the key prefix prefix. Two stores are one when they
// have the same scheme and endpoint and one names a place within the other (for file stores,
// a directory within the other's); their keys overlap when either prefix is a byte prefix of
// the other, as a listing takes them: the source s3://b/in reads s3://b/inx/part-1. Keys
// under _wharf/ at a store's root (the coordinator's records by default) are apart from every
// source: a listing never reads them. The failure is ErrConfig naming both URLs.
func Apart(src *store.Store, prefix string, other *store.Store, key, url string) error {
	if strings.HasPrefix(other.Prefix(), StatePrefix) {
		return nil
	}
	s, o := src.Describe(), other.Describe()
	if s.Endpoint != o.Endpoint { // a location names its scheme: compared below
		return nil
	}
	in := strings.TrimSuffix(s.Location, "/") + "/" + prefix
	out := strings.TrimSuffix(o.Location, "/") + "/"
	if !strings.HasPrefix(in, out) && !strings.HasPrefix(out, in) {
		return nil
	}
	return configErr("%s %q overlaps the source %s: a listing of the source reads keys under %s (a prefix is read byte for byte), so the job would read its own output as input; give a %s outside the source prefix",
		key, url, s.Location+"/"+prefix, o.Location, key)
}

// apart checks the job's sink and coordinator against its source (see Apart).
func (j *Job) apart() error {
	if k, ok := j.sink.(*StoreSink); ok {
		if err := Apart(j.src, j.opt.Prefix, k.s, "to", k.url); err != nil {
			return err
		}
	}
	if s := j.coord.Store(); s != nil {
		if err := Apart(j.src, j.opt.Prefix, s, "coordinator_store", s.Describe().Location); err != nil {
			return fmt.Errorf("the job's records: %w", err)
		}
	}
	return nil
}
