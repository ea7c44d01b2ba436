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
	// uploaded is set when the file's object is in the store and only its record failed (a
	// full spool, say): the next attempt records it without sending it again.
	uploaded *result
}

// The two reports of an attempt: its upload is over (the upload slot is free), then, if the
// upload succeeded, its record is over.
const (
	stageUpload = iota
	stageRecord
)

// event is one report of an attempt.
type event struct {
	stage   int
	f       spool.File
	attempt int
	res     result
	err     error
	dur     time.Duration
	retain  bool // recorded, and local retention removes the file now
}

// maxRecording bounds the files uploaded whose records are still being written: a spool that
// stops writing records (a full disk) stops the uploads soon after.
func (s *Shipper) maxRecording() int { return max(64, 8*s.cfg.UploadConcurrency) }

// counts are the attempts under way: uploads (at most UploadConcurrency) and records.
type counts struct{ uploading, recording int }

func (c counts) idle() bool { return c.uploading == 0 && c.recording == 0 }

// loop ships until ctx ends, the spool is drained (Config.Drain), or a fatal error.
//
// An attempt holds an upload slot only while it uploads: the spool's record of the upload
// (an fsync, shared with the records of the other files finishing meanwhile) is written
// while the slot already serves the next file. That is all the delivery guarantee needs: a
// file is removed only after its record is durable (the attempt removes it after Uploaded
// returned), and the file is not sent again meanwhile (it stays in flight until its record
// is written, or failed).
func (s *Shipper) loop(ctx context.Context) error {
	s.setState(StateShipping)
	// Uploads run on a context of their own: a stop lets them finish, up to the grace.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	events := make(chan event, s.cfg.UploadConcurrency+s.maxRecording())
	var (
		queue    []spool.File
		lastSnap time.Time
		dirty    = true // an attempt ended since the last snapshot
		n        counts
		// shipped holds the files shipped since the last snapshot: that snapshot may still
		// list them.
		shipped = map[uint64]bool{}
	)
	stopTables := s.tab.start(work)
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
		queue = s.start(work, queue, shipped, &n, events)
		if s.cfg.Drain && n.idle() && len(queue) == 0 && !dirty && s.idle() && s.drainTables(ctx) {
			stopTables()
			if s.tab != nil && s.cfg.Retention.Mode != Keep {
				s.retain(ctx, s.sp.Retained(), nil) // the files the last commits released
			}
			s.removers.Wait()
			s.log.Info("drained: nothing left to ship")
			return nil
		}
		wait := time.NewTimer(s.nextWake(lastSnap))
		select {
		case ev := <-events:
			if s.handle(ev, &n, false) {
				dirty = true
			}
			if ev.stage == stageRecord && ev.err == nil {
				shipped[ev.f.ID] = true
			}
		case <-wait.C:
		case <-ctx.Done():
		}
		wait.Stop()
	}
	s.stop(ctx, &n, events, cancelWork)
	stopTables()
	if s.fatalErr() == nil {
		s.tab.final(ctx)
	}
	s.removers.Wait()
	if err := s.fatalErr(); err != nil {
		s.refresh(ctx)
		if !s.cfg.Drain && ctx.Err() == nil {
			// Stay up, unhealthy, so that /healthz and /status say why, until told to stop;
			// the backlog stays true meanwhile (producers may go on adding files).
			for s.pause(ctx, time.Hour) == nil {
			}
		}
		return err
	}
	return nil
}

// drainTables commits every shipped file that waits for its table (Config.Drain) and
// reports whether none is left; a failure is retried at the next call, after its backoff.
func (s *Shipper) drainTables(ctx context.Context) bool {
	if s.tab == nil {
		return true
	}
	if err := s.tab.flush(ctx, true); err != nil {
		s.log.Warn("table commit failed; will retry", "code", errcode.NameOf(err), "error", err)
		s.mu.Lock()
		s.noteLocked(&ErrorInfo{Time: s.now().UTC(), Message: err.Error(), Code: errcode.NameOf(err)})
		s.mu.Unlock()
	}
	return s.tab.idle()
}

// handle accounts for one event and reports whether an attempt ended with it.
func (s *Shipper) handle(ev event, n *counts, cancelled bool) bool {
	switch {
	case ev.stage == stageUpload:
		n.uploading--
		if ev.err == nil {
			n.recording++
			return false
		}
	default:
		n.recording--
	}
	s.finish(ev, cancelled)
	return true
}

// stop lets the attempts in flight finish: once ctx has ended, the uploads for up to the
// grace period, after which it cancels them; the records of uploads that ended always. It
// returns when none is left.
func (s *Shipper) stop(ctx context.Context, n *counts, events chan event, cancelWork func()) {
	stopping := ctx.Done()
	var grace <-chan time.Time
	cancelled := false
	for !n.idle() {
		select {
		case ev := <-events:
			s.handle(ev, n, cancelled)
		case <-stopping:
			stopping = nil
			s.setState(StateStopping)
			s.log.Info("stopping: letting uploads in flight finish", "in_flight", n.uploading+n.recording, "grace", s.cfg.Grace)
			t := time.NewTimer(s.cfg.Grace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			grace = nil
			s.log.Warn("grace period over: cancelling uploads in flight", "in_flight", n.uploading)
			cancelWork()
			cancelled = true
		}
	}
}

// start starts uploads from queue, oldest first, while fewer than UploadConcurrency are
// uploading (and the records under way are few enough), skipping files in flight, shipped,
// or waiting for a retry. It returns what is left.
func (s *Shipper) start(work context.Context, queue []spool.File, shipped map[uint64]bool, n *counts, events chan event) []spool.File {
	now := s.now()
	for n.uploading < s.cfg.UploadConcurrency && n.recording < s.maxRecording() && len(queue) > 0 {
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
		attempt, uploaded := 1, (*result)(nil)
		if rs != nil {
			attempt, uploaded = rs.attempts+1, rs.uploaded
		}
		s.stat.inflight[f.ID] = f
		s.mu.Unlock()
		n.uploading++
		go s.attempt(work, f, attempt, uploaded, events)
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

// attempt makes one attempt at f: the upload (unless an earlier attempt made it, uploaded),
// reported as soon as it is over, then the spool's record, reported too. With
// delete_after_upload, a recorded file is marked as retaining (so that no retention pass
// removes it twice) and removed after the report: the loop does not wait for the removal.
func (s *Shipper) attempt(ctx context.Context, f spool.File, n int, uploaded *result, events chan<- event) {
	start := s.now()
	var res result
	var err error
	if uploaded != nil {
		res = *uploaded
	} else {
		res, err = s.upload(ctx, f)
	}
	events <- event{stage: stageUpload, f: f, attempt: n, res: res, err: err, dur: s.now().Sub(start)}
	if err != nil {
		return
	}
	ev := event{stage: stageRecord, f: f, attempt: n, res: res}
	ev.err = s.record(ctx, f, res)
	ev.dur = s.now().Sub(start)
	if ev.err == nil && s.cfg.Retention.Mode == DeleteAfterUpload && !s.tab.holds(f) {
		ev.retain = true
		s.removers.Add(1) // before the loop hears of the attempt, so that it waits for the removal
		s.mu.Lock()
		s.stat.retaining[f.ID] = true
		s.mu.Unlock()
	}
	events <- ev
	if ev.retain {
		s.removeAfter(ctx, f)
	}
}

// record writes the uploaded record, even after a stop: the object is in the store.
func (s *Shipper) record(ctx context.Context, f spool.File, res result) error {
	s.point("after-put", f)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	err := s.sp.Uploaded(rctx, f.ID, s.where(res.key), res.etag, res.outcome)
	if err != nil {
		return fmt.Errorf("file %d is in the store at %s, but recording its upload in the spool failed (it is recorded, without being sent again, at the next attempt): %w",
			f.ID, s.where(res.key), err)
	}
	s.point("after-record", f)
	return nil
}

// removeAfter applies delete_after_upload to f, whose upload attempt recorded it and marked it
// as retaining.
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

// finish accounts for the end of one attempt: a failed upload, or a record written or failed.
func (s *Shipper) finish(ev event, cancelled bool) {
	s.mu.Lock()
	delete(s.stat.inflight, ev.f.ID)
	s.mu.Unlock()
	f := ev.f
	attrs := []any{"file_id", f.ID, "dataset", f.Dataset, "size", f.Size, "sha256", f.SHA256,
		"duration", ev.dur, "attempt", ev.attempt}
	if ev.res.key != "" {
		attrs = append(attrs, "key", s.where(ev.res.key))
	} else {
		attrs = append(attrs, "key", s.where(s.key(f)))
	}
	switch {
	case ev.err == nil:
		s.mu.Lock()
		delete(s.stat.retry, f.ID)
		s.stat.uploaded++
		s.stat.standing = 0
		s.mu.Unlock()
		s.m.uploaded(ev.res.outcome, f.Size, ev.dur)
		s.log.Info("uploaded", append(attrs, "outcome", ev.res.outcome)...)
	case cancelled || (store.IsContext(ev.err) && s.state() == StateStopping):
		s.log.Info("upload cancelled by the stop; it resumes on restart", append(attrs, "error", ev.err)...)
	case isFatal(ev.err):
		s.m.outcome(OutcomeFatal)
		s.log.Error("shipping stopped", append(attrs, "outcome", OutcomeFatal, "code", errcode.NameOf(ev.err), "error", ev.err)...)
		s.setFatal(ev.err, f, ev.res.key)
	default:
		s.m.outcome(OutcomeRetry)
		now := s.now()
		s.mu.Lock()
		rs := s.stat.retry[f.ID]
		if rs == nil {
			rs = &retryState{since: now.Add(-ev.dur)}
			s.stat.retry[f.ID] = rs
		}
		rs.attempts = ev.attempt
		rs.uploaded = nil
		if ev.stage == stageRecord {
			res := ev.res
			rs.uploaded = &res
		}
		wait := s.cfg.Retry.Delay(ev.attempt, s.rnd)
		rs.next = now.Add(wait)
		s.failedLocked(&ErrorInfo{Time: now.UTC(), Message: ev.err.Error(), Code: errcode.NameOf(ev.err), FileID: f.ID}, ev.err)
		s.mu.Unlock()
		s.log.Warn("upload failed; will retry", append(attrs, "outcome", OutcomeRetry, "retry_in", wait,
			"code", errcode.NameOf(ev.err), "error", ev.err)...)
		s.warnClock(ev.err)
	}
}

// refresh re-reads the spool's catalog, so that the backlog counts what producers added,
// without starting anything: before the probe, while it waits, and after a fatal error.
func (s *Shipper) refresh(ctx context.Context) {
	s.refreshed = s.now()
	err := s.sp.Refresh(ctx)
	if err != nil && !store.IsContext(err) {
		s.log.Warn("re-reading the spool's catalog failed", "spool", s.sp.Dir(), "error", err)
	}
}

// queueLen is how many files waiting a snapshot takes (besides those in flight or waiting for
// a retry, which it skips): enough to keep every upload slot busy until the next snapshot,
// which an empty queue brings forward. Copying the whole backlog each time would cost
// memory and time in proportion to it.
func (s *Shipper) queueLen() int { return max(64, 4*s.cfg.UploadConcurrency) }

// snapshot re-reads the catalog and returns the oldest files waiting, oldest first (the
// caller skips those in flight), and applies local retention. Its error is fatal (a catalog
// that cannot be trusted); a transient failure is logged and the last snapshot's state kept.
func (s *Shipper) snapshot(ctx context.Context) ([]spool.File, error) {
	s.refreshed = s.now()
	err := s.sp.Refresh(ctx)
	s.mu.Lock()
	busy := len(s.stat.inflight) + len(s.stat.retry)
	s.mu.Unlock()
	pending := s.sp.PendingN(s.queueLen() + busy)
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
		s.noteLocked(&ErrorInfo{Time: s.now().UTC(), Message: err.Error(), Code: errcode.NameOf(err)})
		s.mu.Unlock()
	}
	s.retain(ctx, retained, removing)
	return pending, nil
}

// retain applies local retention to files whose upload is recorded: delete_after_upload
// removes any left (a stop or a crash between the record and the removal), keep_for removes
// those uploaded KeepFor ago or more. The removals run beside the loop, retainWorkers at
// once. Files in flight, or being removed now or when retained was read (removing), are left
// to their own removal.
func (s *Shipper) retain(ctx context.Context, retained []spool.File, removing map[uint64]bool) {
	now := s.now()
	var todo []spool.File
	s.mu.Lock()
	for _, f := range retained {
		if s.cfg.Retention.Mode == KeepFor && now.Before(f.UploadedAt.Add(s.cfg.Retention.KeepFor)) {
			continue
		}
		_, busy := s.stat.inflight[f.ID] // its own attempt removes it
		if busy || removing[f.ID] || s.stat.retaining[f.ID] || s.tab.holds(f) {
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
const retainWorkers = 4
