package export

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/wharfdata/wharf/dataset"
)

// writeChunks writes the chunks of p whose indexes are in todo, then each chunk planned
// after them as soon as it is planned, Parallel at a time. The plan is made here, one range
// ahead of the workers. The first failure cancels the others and is returned.
func (r *runner) writeChunks(ctx context.Context, p *runPlan, todo []int) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan *ChunkRecord)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	failed := func(err error) { once.Do(func() { first = err; cancel(err) }) }
	for range r.parallel() {
		wg.Go(func() {
			for c := range jobs {
				if err := r.writeChunk(ctx, c); err != nil {
					failed(err)
				}
			}
		})
	}
	send := func(c *ChunkRecord) bool {
		select {
		case jobs <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	func() {
		for _, idx := range todo {
			if !send(p.chunks[idx]) {
				return
			}
		}
		for {
			idx, ok, err := r.more(ctx, p)
			if err == nil && ok && r.res.Resumed {
				// Planned after the interrupt: nothing of ours is at its key, and anything
				// that is there is quarantined (M9).
				_, err = r.reconcileChunk(ctx, p.chunks[idx])
			}
			if err != nil {
				failed(err)
				return
			}
			if !ok || !send(p.chunks[idx]) {
				return
			}
		}
	}()
	close(jobs)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// writeChunk reads one chunk's rows and writes its part, journaling it running, then
// committed with the part's size, rows, sha256 and ETag.
func (r *runner) writeChunk(ctx context.Context, c *ChunkRecord) error {
	if err := r.j.SetChunk(ctx, r.rec.RunID, c.Index, "running", nil); err != nil {
		return err
	}
	if err := r.beforeWrite(ctx); err != nil {
		return err
	}
	key := partKey(r.rec.RunID, c.Index, r.e.Format)
	part, footer, err := writePart(ctx, r.dst, key, r.e.Format, schemaOf(r.cols),
		func(emit func(arrow.RecordBatch) error) (int64, error) {
			return r.src.readRange(ctx, r.e, r.cols, c.Range, r.window, r.batchRows(), emit)
		})
	if err != nil {
		return err
	}
	r.keepFooter(c.Index, footer)
	part.Chunk, part.Range = c.Index, c.Range
	if err := r.j.SetChunk(ctx, r.rec.RunID, c.Index, "committed", &part); err != nil {
		return err
	}
	c.Status, c.Part = "committed", part
	r.progress(part)
	return nil
}

func (r *runner) batchRows() int {
	if r.o.BatchRows > 0 {
		return r.o.BatchRows
	}
	return 16 * 1024
}

func (r *runner) progress(p Part) {
	r.wroteMu.Lock()
	r.res.Rows += p.Rows
	r.res.Bytes += p.Size
	r.prog.ChunksDone++
	r.prog.Rows, r.prog.Bytes = r.res.Rows, r.res.Bytes
	pr := r.prog
	r.wroteMu.Unlock()
	if r.o.Progress != nil {
		r.o.Progress(pr)
	}
	r.o.log().Debug("export: part written", "export", r.e.Name, "run_id", r.rec.RunID, "key", p.Key, "rows", p.Rows, "bytes", p.Size)
}

// beforeWrite runs once, before the first object a run puts or moves at the prefix: it
// removes _SUCCESS, so that no reader trusts the prefix while it changes (M4).
func (r *runner) beforeWrite(ctx context.Context) error {
	r.writeOnce.Do(func() {
		r.wroteMu.Lock()
		r.wrote = true
		r.wroteMu.Unlock()
		if err := r.dst.Delete(ctx, dataset.SuccessKey, nil); err != nil {
			r.wroteErr = newErr("write", dataset.SuccessKey, ErrWrite, err)
		}
	})
	return r.wroteErr
}
