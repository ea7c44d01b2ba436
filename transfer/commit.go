package transfer

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/wharfdata/wharf/internal/atomicfile"
)

// DefaultCommitters is how many finished local files are synced and renamed at once: enough
// that ext4 folds their fsyncs into few journal commits, while the download workers go on
// reading the network.
const DefaultCommitters = 16

// Small finished files are made durable together: one syncfs(2) covers a batch of up to
// batchMax files of at most batchFileSize bytes each, after which each is renamed into place.
// Per file, an fsync costs a data write and an inode write, each its own request to the disk;
// one syncfs sends the whole batch's data and inodes as a few merged writes. The guarantee is
// the same: a file gets its final name only once its bytes are on the disk.
const (
	batchMax      = 64
	batchFileSize = 1 << 20
)

// batchSync flushes the file system for a batch (a variable for tests).
var batchSync = syncFS

// pending is a complete temporary file waiting to be synced and renamed into place.
type pending struct {
	l    *Local
	f    *atomicfile.File
	path string
	size int64
	cond cond
	seq  uint64 // its number in the order the Local created its files
}

// commit syncs the file and moves it to its final name; on failure the temporary file is
// removed.
func (p *pending) commit() error { return p.place(false) }

// place moves the file to its final name, syncing it first unless synced says a syncfs(2)
// already covered it; on failure the temporary file is removed.
func (p *pending) place(synced bool) error {
	if err := p.l.commit(p.f, p.path, p.cond, synced); err != nil {
		p.abort()
		return err
	}
	return nil
}

// batched reports whether p waits for a shared syncfs(2) rather than an fsync of its own.
func (p *pending) batched() bool {
	return haveSyncFS && p.l.Durability == DurableEach && p.size <= batchFileSize
}

// abort removes the temporary file: nothing appears under the final name.
func (p *pending) abort() { p.f.Abort() }

// commitJob is a pending file and what to do once it is committed or abandoned.
type commitJob struct {
	p    *pending
	done func(error)
}

// committers sync and rename finished files off the download workers, so that the network
// reads go on while the disk syncs. A file appears under its final name only once synced;
// once the run is cancelled, queued files are removed instead. Large files are synced one
// each by n goroutines; small ones in batches by one more (see batchMax).
type committers struct {
	q     chan commitJob // files synced one each
	small chan commitJob // files synced in batches
	wg    sync.WaitGroup
}

// startCommitters starts n committers behind a queue of depth queue, and the batch committer
// behind one of at least batchMax.
func startCommitters(ctx context.Context, n, queue int) *committers {
	c := &committers{q: make(chan commitJob, queue), small: make(chan commitJob, max(queue, batchMax))}
	for range n {
		c.wg.Go(func() {
			for j := range c.q {
				if err := ctx.Err(); err != nil {
					j.p.abort()
					j.done(err)
					continue
				}
				j.done(j.p.commit())
			}
		})
	}
	c.wg.Go(func() { c.batches(ctx) })
	return c
}

// batches takes what the small queue holds, up to batchMax files, syncs the file system once
// and renames each into place, until the queue is closed. Should the syncfs fail, each file
// is fsynced on its own, so that the error names the file it belongs to, if any.
func (c *committers) batches(ctx context.Context) {
	batch := make([]commitJob, 0, batchMax)
	for j := range c.small {
		batch = append(batch[:0], j)
	more:
		for len(batch) < batchMax {
			select {
			case j, ok := <-c.small:
				if !ok {
					break more
				}
				batch = append(batch, j)
			default:
				break more
			}
		}
		if err := ctx.Err(); err != nil {
			for _, j := range batch {
				j.p.abort()
				j.done(err)
			}
			continue
		}
		// syncfs(2) reports the write errors that came after its file was opened: the file
		// created first sees the errors of every file in the batch.
		first := slices.MinFunc(batch, func(a, b commitJob) int { return cmp.Compare(a.p.seq, b.p.seq) })
		synced := batchSync(first.p.f.File) == nil
		for _, j := range batch {
			j.done(j.p.place(synced))
		}
	}
}

// submit queues j, waiting while the queue is full; once ctx ends the file is removed and
// j.done hears ctx's error.
func (c *committers) submit(ctx context.Context, j commitJob) {
	q := c.q
	if j.p.batched() {
		q = c.small
	}
	select {
	case q <- j:
	case <-ctx.Done():
		j.p.abort()
		j.done(ctx.Err())
	}
}

// wait returns once every queued file is committed or removed. No submit may follow.
func (c *committers) wait() {
	close(c.q)
	close(c.small)
	c.wg.Wait()
}
