package backfill

import (
	"context"
	"fmt"
)

// reader reads splits as batches of records.
type reader struct {
	job *Job
}

// readSplit reads split from the watermark from on and hands each batch to emit, in order.
// A member's failure is an *ObjectError naming it (see classify); emit's error is returned
// as it is.
func (r reader) readSplit(ctx context.Context, sp *Split, from Watermark, emit func(*Batch) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := newFetcher(ctx, r.job.src, sp, from.Member, &r.job.cfg, r.job.m.read)
	defer f.close()
	records := from.Records
	for m := from.Member; m < len(sp.Members); m++ {
		var skip Watermark
		if m == from.Member {
			skip = from
		}
		if err := r.readMember(ctx, f, sp, m, skip, &records, emit); err != nil {
			cancel()
			return err
		}
	}
	return nil
}

// readMember reads member m, dropping the first skip.Record records (delivered before) and
// checking that they end at skip.Offset.
func (r reader) readMember(ctx context.Context, f *fetcher, sp *Split, m int, skip Watermark, records *int64, emit func(*Batch) error) error {
	mem := sp.Members[m]
	mr := &memberReader{f: f, member: m}
	defer mr.drain()
	dec, err := openDecoder(r.job.cfg.Compression, mem.Key, mr)
	if err != nil {
		return r.memberErr(ctx, sp, mem, mr, err)
	}
	defer dec.close()
	fr := newFramer(dec, r.job.cfg.MaxRecordBytes)
	b := &Batch{Split: sp.ID, Member: m, Key: mem.Key, First: skip.Record}
	for {
		l, ok, err := fr.line()
		if err != nil {
			return r.memberErr(ctx, sp, mem, mr, err)
		}
		if !ok {
			break
		}
		if fr.record <= skip.Record {
			if fr.record == skip.Record && fr.pos != skip.Offset {
				return r.drift(sp, mem, skip, fr.pos)
			}
			continue
		}
		b.Data = append(b.Data, l...)
		b.Ends = append(b.Ends, len(b.Data))
		b.Data = append(b.Data, '\n')
		*records++
		if len(b.Data) >= batchBytes {
			b.End = Watermark{Member: m, Record: fr.record, Offset: fr.pos, ETag: mem.ETag, Records: *records}
			if err := emit(b); err != nil {
				return err
			}
			r.job.m.decoded(int64(len(b.Data)), len(b.Ends))
			b = &Batch{Split: sp.ID, Member: m, Key: mem.Key, First: fr.record, Data: make([]byte, 0, batchBytes+4096)}
		}
	}
	if fr.record < skip.Record {
		return r.drift(sp, mem, skip, fr.pos)
	}
	b.End = Watermark{Member: m + 1, Records: *records}
	if m+1 < len(sp.Members) {
		b.End.ETag = sp.Members[m+1].ETag
	}
	r.job.m.decoded(int64(len(b.Data)), len(b.Ends))
	return emit(b)
}

// memberErr names the member's failure: the store's when the fetch failed, else corruption.
func (r reader) memberErr(ctx context.Context, sp *Split, mem Member, mr *memberReader, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if mr.err != nil {
		return classify(sp.ID, mem.Key, mr.err)
	}
	return &ObjectError{Split: sp.ID, Key: mem.Key, Reason: ReasonCorrupt, Err: err}
}

// drift is a resumed member whose delivered records do not end where the watermark says.
func (r reader) drift(sp *Split, mem Member, wm Watermark, pos int64) error {
	return &ObjectError{Split: sp.ID, Key: mem.Key, Reason: ReasonCorrupt,
		Err: fmt.Errorf("drift: the watermark's %d records end at byte %d, but the object's end at %d", wm.Record, wm.Offset, pos)}
}
