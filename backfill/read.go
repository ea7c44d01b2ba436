package backfill

import (
	"context"
	"errors"
	"fmt"
)

// reader reads splits as batches of records.
type reader struct {
	job *Job
}

// batchQueue is how many batches a split's decoder may have ready before its sink takes them:
// the decoder and the sink's writes run side by side.
const batchQueue = 2

// readSplit reads split from the watermark from on and hands each batch to emit, in order.
// Decoding runs in a goroutine of its own, up to batchQueue batches ahead of emit. A member's
// failure is an *ObjectError naming it (see classify); emit's error is returned as it is.
func (r reader) readSplit(ctx context.Context, sp *Split, from Watermark, emit func(*Batch) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := newFetcher(ctx, r.job.src, sp, from.Member, &r.job.cfg, r.job.bufs, r.job.m.read)
	defer f.close()
	ch := make(chan *Batch, batchQueue)
	var decodeErr error
	go func() {
		defer close(ch)
		decodeErr = r.decode(ctx, f, sp, from, func(b *Batch) error {
			select {
			case ch <- b:
				return nil
			case <-ctx.Done():
				b.recycle()
				return ctx.Err()
			}
		})
	}()
	var err error
	for b := range ch {
		if err != nil {
			b.recycle() // never handed to the sink
			continue
		}
		if err = emit(b); err != nil {
			cancel()
		}
	}
	if err != nil {
		return err
	}
	return decodeErr
}

// decode reads the split's members from the watermark on, but for those it leaves out
// (quarantined: a watermark inside one resumes at the next member).
func (r reader) decode(ctx context.Context, f *fetcher, sp *Split, from Watermark, emit func(*Batch) error) error {
	records := from.Records
	for m := from.Member; m < len(sp.Members); m++ {
		if sp.Skipped(m) {
			continue
		}
		var skip Watermark
		if m == from.Member {
			skip = from
		}
		if err := r.readMember(ctx, f, sp, m, skip, &records, emit); err != nil {
			return err
		}
	}
	return nil
}

// readMember reads member m, dropping the first skip.Record records (delivered before) and
// checking that they end at skip.Offset. Once its first bytes are there, it decodes only while
// it holds one of the job's decoding tokens: with more splits in flight than processors, the
// others wait their turn (their ranges are fetched meanwhile) rather than share the
// processors and their caches.
func (r reader) readMember(ctx context.Context, f *fetcher, sp *Split, m int, skip Watermark, records *int64, emit func(*Batch) error) error {
	mem := sp.Members[m]
	mr := &memberReader{f: f, member: m}
	defer mr.drain()
	dec, err := openDecoder(r.job.cfg.Compression, mem.Key, mr)
	if err != nil {
		return r.memberErr(ctx, sp, mem, mr, skip, err)
	}
	defer dec.close()
	select {
	case r.job.decoding <- struct{}{}:
		defer func() { <-r.job.decoding }()
	case <-ctx.Done():
		return ctx.Err()
	}
	fr := newFramer(dec, r.job.cfg.MaxRecordBytes, r.job.bufs, skip)
	first := skip.Record
	for {
		done, err := fr.fill()
		if err != nil {
			fr.release()
			return r.memberErr(ctx, sp, mem, mr, skip, err)
		}
		b := &Batch{Split: sp.ID, Member: m, Key: mem.Key, First: first}
		fr.cut(b, done)
		first = fr.afterRecord
		*records += int64(b.Len())
		if done {
			b.End = Watermark{Member: m + 1, Records: *records}
			if m+1 < len(sp.Members) {
				b.End.ETag = sp.Members[m+1].ETag
			}
		} else {
			b.End = Watermark{Member: m, Record: fr.afterRecord, Offset: fr.afterPos, ETag: mem.ETag, Records: *records}
		}
		r.job.m.decoded(int64(len(b.Data)), b.Len())
		if err := emit(b); err != nil || done {
			if !done {
				fr.release()
			}
			return err
		}
	}
}

// memberErr names the member's failure: the store's when the fetch failed, else corruption.
func (r reader) memberErr(ctx context.Context, sp *Split, mem Member, mr *memberReader, skip Watermark, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if mr.err != nil {
		return classify(sp.ID, mem.Key, mr.err)
	}
	var d errDrift
	if errors.As(err, &d) {
		err = fmt.Errorf("drift: the watermark's %d records end at byte %d, but the object's end at %d", skip.Record, skip.Offset, d.at)
	}
	return &ObjectError{Split: sp.ID, Key: mem.Key, Reason: ReasonCorrupt, Err: err}
}
