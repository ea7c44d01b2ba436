package ship

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
)

// retryState is a file whose last attempt failed.
type retryState struct {
	attempts int       // attempts made
	since    time.Time // when the first failed attempt started
	next     time.Time // not before
}

// done is the end of one attempt.
type done struct {
	f       spool.File
	attempt int
	res     result
	err     error
	dur     time.Duration
	retain  bool // the upload is recorded and local retention removes the file now
}

// loop ships until ctx ends, the spool is drained (Config.Drain), or a fatal error.
func (s *Shipper) loop(ctx context.Context) error {
	s.setState(StateShipping)
	// Uploads run on a context of their own: a stop lets them finish, up to the grace.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	results := make(chan done, s.cfg.UploadConcurrency)
	var (
		queue    []spool.File
		lastSnap time.Time
		dirty    = true // an attempt ended since the last snapshot
		inflight int
		// shipped holds the files shipped since the last snapshot: that snapshot may still
		// list them.
		shipped = map[uint64]bool{}
	)
	for ctx.Err() == nil && s.fatalErr() == nil {
		now := s.now()
		if now.Sub(lastSnap) >= s.cfg.PollInterval || (dirty && len(queue) == 0) {
			var err error
			if queue, err = s.snapshot(ctx); err != nil {
				s.setFatal(err, spool.File{}, "")
				break
			}
			lastSnap, dirty = now, false
			clear(shipped)
		}
		queue = s.start(work, queue, shipped, &inflight, results)
		if s.cfg.Drain && inflight == 0 && len(queue) == 0 && !dirty && s.idle() {
			s.removers.Wait()
			s.log.Info("drained: nothing left to ship")
			return nil
		}
		wait := time.NewTimer(s.nextWake(lastSnap))
		select {
		case d := <-results:
			inflight--
			s.finish(d, false)
			dirty = true
			if d.err == nil {
				shipped[d.f.ID] = true
			}
		case <-wait.C:
		case <-ctx.Done():
		}
		wait.Stop()
	}
	s.stop(ctx, &inflight, results, cancelWork)
	s.removers.Wait()
	if err := s.fatalErr(); err != nil {
		if !s.cfg.Drain && ctx.Err() == nil {
			// Stay up, unhealthy, so that /healthz and /status say why, until told to stop.
			<-ctx.Done()
		}
		return err
	}
	return nil
}

// stop lets the uploads in flight finish: once ctx has ended, for up to the grace period,
// after which it cancels them. It returns when none is left.
func (s *Shipper) stop(ctx context.Context, inflight *int, results chan done, cancelWork func()) {
	stopping := ctx.Done()
	var grace <-chan time.Time
	cancelled := false
	for *inflight > 0 {
		select {
		case d := <-results:
			*inflight--
			s.finish(d, cancelled)
		case <-stopping:
			stopping = nil
			s.setState(StateStopping)
			s.log.Info("stopping: letting uploads in flight finish", "in_flight", *inflight, "grace", s.cfg.Grace)
			t := time.NewTimer(s.cfg.Grace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			grace = nil
			s.log.Warn("grace period over: cancelling uploads in flight", "in_flight", *inflight)
			cancelWork()
			cancelled = true
		}
	}
}

// start starts uploads from queue, oldest first, while fewer than UploadConcurrency are in
// flight, skipping files in flight, shipped, or waiting for a retry. It returns what is left.
func (s *Shipper) start(work context.Context, queue []spool.File, shipped map[uint64]bool, inflight *int, results chan done) []spool.File {
	now := s.now()
	for *inflight < s.cfg.UploadConcurrency && len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if shipped[f.ID] {
			continue
		}
		s.mu.Lock()
		_, busy := s.stat.inflight[f.ID]
		rs := s.stat.retry[f.ID]
		if busy || (rs != nil && now.Before(rs.next)) {
			s.mu.Unlock()
			continue
		}
		attempt := 1
		if rs != nil {
			attempt = rs.attempts + 1
		}
		s.stat.inflight[f.ID] = f
		s.mu.Unlock()
		*inflight++
		go func() {
			d := s.attempt(work, f, attempt)
			results <- d
			if d.retain {
				s.removeAfter(work, f)
			}
		}()
	}
	return queue
}

// nextWake is how long the loop may sleep: until the next snapshot or the next retry due.
func (s *Shipper) nextWake(lastSnap time.Time) time.Duration {
	now := s.now()
	next := lastSnap.Add(s.cfg.PollInterval)
	s.mu.Lock()
	for _, rs := range s.stat.retry {
		if rs.next.Before(next) {
			next = rs.next
		}
	}
	s.mu.Unlock()
	return max(next.Sub(now), time.Millisecond)
}

// idle reports whether no file waits for a retry.
func (s *Shipper) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.stat.retry) == 0
}

// attempt makes one attempt at f: the upload, then the spool's record. With
// delete_after_upload, a recorded file is marked as retaining (so that no retention pass
// removes it twice) and done.retain says that the caller removes it, after reporting the
// attempt: the next upload does not wait for the removal.
func (s *Shipper) attempt(ctx context.Context, f spool.File, n int) done {
	start := s.now()
	res, err := s.upload(ctx, f)
	if err == nil {
		err = s.record(ctx, f, res)
	}
	d := done{f: f, attempt: n, res: res, err: err, dur: s.now().Sub(start)}
	if err == nil && s.cfg.Retention.Mode == DeleteAfterUpload {
		d.retain = true
		s.removers.Add(1) // before the loop hears of the attempt, so that it waits for the removal
		s.mu.Lock()
		s.stat.retaining[f.ID] = true
		s.mu.Unlock()
	}
	return d
}

// record writes the uploaded record, even after a stop: the object is in the store.
func (s *Shipper) record(ctx context.Context, f spool.File, res result) error {
	s.point("after-put", f)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	err := s.sp.Uploaded(rctx, f.ID, s.where(res.key), res.etag, res.outcome)
	if err != nil {
		return fmt.Errorf("recording the upload of file %d (%s): %w", f.ID, s.where(res.key), err)
	}
	s.point("after-record", f)
	return nil
}

// removeAfter applies delete_after_upload to f, whose upload attempt recorded it and marked it
// as retaining. Removals of files recorded together run at once and share the spool's
// directory and catalog fsyncs (its group commit).
func (s *Shipper) removeAfter(ctx context.Context, f spool.File) {
	defer s.removers.Done()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	s.remove(rctx, f)
	s.mu.Lock()
	delete(s.stat.retaining, f.ID)
	s.mu.Unlock()
}

func (s *Shipper) point(name string, f spool.File) {
	if s.opts.Hooks.Point != nil {
		s.opts.Hooks.Point(name, f)
	}
}

// remove applies local retention to f, whose upload is recorded. A failure is logged and
// tried again by a later retention pass.
func (s *Shipper) remove(ctx context.Context, f spool.File) {
	err := s.sp.Remove(ctx, f.ID)
	if err != nil {
		s.log.Warn("local retention could not remove a file; will try again", "file_id", f.ID, "path", f.Path, "error", err)
		return
	}
	s.log.Debug("removed after upload", "file_id", f.ID, "path", f.Path, "retention", s.cfg.Retention.Mode)
}

// finish accounts for the end of one attempt.
func (s *Shipper) finish(d done, cancelled bool) {
	s.mu.Lock()
	delete(s.stat.inflight, d.f.ID)
	s.mu.Unlock()
	f := d.f
	attrs := []any{"file_id", f.ID, "dataset", f.Dataset, "size", f.Size, "sha256", f.SHA256,
		"duration", d.dur, "attempt", d.attempt}
	if d.res.key != "" {
		attrs = append(attrs, "key", s.where(d.res.key))
	} else {
		attrs = append(attrs, "key", s.where(ObjectKey(s.cfg.Pipeline, s.cfg.Node, s.epoch, f)))
	}
	switch {
	case d.err == nil:
		s.mu.Lock()
		delete(s.stat.retry, f.ID)
		s.stat.uploaded++
		s.mu.Unlock()
		s.m.uploaded(d.res.outcome, f.Size, d.dur)
		s.log.Info("uploaded", append(attrs, "outcome", d.res.outcome)...)
	case cancelled || (store.IsContext(d.err) && s.state() == StateStopping):
		s.log.Info("upload cancelled by the stop; it resumes on restart", append(attrs, "error", d.err)...)
	case isFatal(d.err):
		s.m.outcome(OutcomeFatal)
		s.log.Error("shipping stopped", append(attrs, "outcome", OutcomeFatal, "code", errcode.NameOf(d.err), "error", d.err)...)
		s.setFatal(d.err, f, d.res.key)
	default:
		s.m.outcome(OutcomeRetry)
		now := s.now()
		s.mu.Lock()
		rs := s.stat.retry[f.ID]
		if rs == nil {
			rs = &retryState{since: now.Add(-d.dur)}
			s.stat.retry[f.ID] = rs
		}
		rs.attempts = d.attempt
		wait := s.cfg.Retry.Delay(d.attempt, s.rnd)
		rs.next = now.Add(wait)
		s.stat.lastErr = &ErrorInfo{Time: now.UTC(), Message: d.err.Error(), Code: errcode.NameOf(d.err), FileID: f.ID}
		s.mu.Unlock()
		s.log.Warn("upload failed; will retry", append(attrs, "outcome", OutcomeRetry, "retry_in", wait,
			"code", errcode.NameOf(d.err), "error", d.err)...)
	}
}

// snapshot re-reads the catalog and returns the files waiting, oldest first, without those in
// flight; it refreshes the backlog, the gauges, and applies local retention. Its error is
// fatal (a catalog that cannot be trusted); a transient failure is logged and the last
// snapshot's state kept.
func (s *Shipper) snapshot(ctx context.Context) ([]spool.File, error) {
	err := s.sp.Refresh(ctx)
	pending := s.sp.Pending()
	stats := s.sp.Stats()
	var retained []spool.File
	var removing map[uint64]bool
	if err == nil && s.cfg.Retention.Mode != Keep {
		// The removals under way now may end before retain looks: a file they removed must
		// not be removed again, though Retained, read after this, may still list it.
		s.mu.Lock()
		removing = maps.Clone(s.stat.retaining)
		s.mu.Unlock()
		retained = s.sp.Retained()
	}
	switch {
	case err != nil && store.IsContext(err):
		return nil, nil
	case err != nil && isFatal(err):
		return nil, err
	case err != nil:
		s.log.Warn("re-reading the spool's catalog failed", "spool", s.sp.Dir(), "error", err)
		s.mu.Lock()
		s.stat.lastErr = &ErrorInfo{Time: s.now().UTC(), Message: err.Error(), Code: errcode.NameOf(err)}
		s.mu.Unlock()
	}
	s.m.spoolStats(stats)
	var bl backlog
	for _, f := range pending {
		bl.files++
		bl.bytes += f.Size
		if bl.oldest.IsZero() || f.Time.Before(bl.oldest) {
			bl.oldest = f.Time
		}
	}
	s.mu.Lock()
	s.stat.backlog = bl
	s.mu.Unlock()
	s.retain(ctx, retained, removing)
	return pending, nil
}

// retain applies local retention to files whose upload is recorded: delete_after_upload
// removes any left (a stop or a crash between the record and the removal), keep_for removes
// those uploaded KeepFor ago or more. The removals run beside the loop, retainWorkers at
// once so that the spool commits them in groups. Files in flight, or being removed now or
// when retained was read (removing), are left to their own removal.
func (s *Shipper) retain(ctx context.Context, retained []spool.File, removing map[uint64]bool) {
	now := s.now()
	var todo []spool.File
	s.mu.Lock()
	for _, f := range retained {
		if s.cfg.Retention.Mode == KeepFor && now.Before(f.UploadedAt.Add(s.cfg.Retention.KeepFor)) {
			continue
		}
		_, busy := s.stat.inflight[f.ID] // its own attempt removes it
		if busy || removing[f.ID] || s.stat.retaining[f.ID] {
			continue
		}
		s.stat.retaining[f.ID] = true
		todo = append(todo, f)
	}
	s.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	s.removers.Add(1)
	go func() {
		defer s.removers.Done()
		files := make(chan spool.File)
		var wg sync.WaitGroup
		for range min(len(todo), retainWorkers) {
			wg.Go(func() {
				for f := range files {
					if ctx.Err() == nil {
						s.remove(ctx, f)
					}
					s.mu.Lock()
					delete(s.stat.retaining, f.ID)
					s.mu.Unlock()
				}
			})
		}
		for _, f := range todo {
			files <- f
		}
		close(files)
		wg.Wait()
	}()
}

// retainWorkers is how many removals a retention pass runs at once.
const retainWorkers = 16
