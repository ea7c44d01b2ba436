package transfer

import (
	"context"
	"os"
	"sync"
)

// DefaultCommitters is how many finished local files are synced and renamed at once: enough
// that ext4 folds their fsyncs into few journal commits, while the download workers go on
// reading the network.
const DefaultCommitters = 16

// pending is a complete temporary file waiting to be synced and renamed into place.
type pending struct {
	l        *Local
	f        *os.File
	tmp      string
	path     string
	ifAbsent bool
}

// commit syncs the file and moves it to its final name; on failure the temporary file is
// removed.
func (p *pending) commit() error {
	if err := p.l.commit(p.f, p.tmp, p.path, p.ifAbsent); err != nil {
		p.abort()
		return err
	}
	return nil
}

// abort removes the temporary file: nothing appears under the final name.
func (p *pending) abort() {
	_ = p.f.Close()
	_ = os.Remove(p.tmp)
}

// commitJob is a pending file and what to do once it is committed or abandoned.
type commitJob struct {
	p    *pending
	done func(error)
}

// committers sync and rename finished files off the download workers, so that the network
// reads go on while the disk syncs. A file appears under its final name only once synced;
// once the run is cancelled, queued files are removed instead.
type committers struct {
	q  chan commitJob
	wg sync.WaitGroup
}

// startCommitters starts n committers behind a queue of depth queue.
func startCommitters(ctx context.Context, n, queue int) *committers {
	c := &committers{q: make(chan commitJob, queue)}
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
	return c
}

// submit queues j, waiting while the queue is full; once ctx ends the file is removed and
// j.done hears ctx's error.
func (c *committers) submit(ctx context.Context, j commitJob) {
	select {
	case c.q <- j:
	case <-ctx.Done():
		j.p.abort()
		j.done(ctx.Err())
	}
}

// wait returns once every queued file is committed or removed. No submit may follow.
func (c *committers) wait() {
	close(c.q)
	c.wg.Wait()
}
