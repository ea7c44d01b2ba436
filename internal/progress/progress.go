package progress

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Tick is how often a bar is redrawn.
const Tick = 150 * time.Millisecond

// Options shape a bar.
type Options struct {
	Width int                   // 0: the terminal's
	Extra []mpb.ContainerOption // more container options (tests force a terminal onto a buffer)
	// Prepend and Append are the decorators before and after the bar.
	Prepend, Append []decor.Decorator
	// Every, when set, is called at each tick with the bar and the time since the last tick:
	// where the command's counters become the bar's.
	Every func(b *mpb.Bar, since time.Duration)
}

// Bar is one progress bar. Its methods do nothing on a nil *Bar.
type Bar struct {
	p    *mpb.Progress
	bar  *mpb.Bar
	stop chan struct{}
	once sync.Once
	done sync.WaitGroup
	// refresh, when set, brings the bar up to date before its last frame (StartFigures).
	refresh func()
}

// Start draws a bar to w. Made with no total, it never completes by itself (a command's
// total is often known late, and its counters can reach it before the work is done): Done
// completes it.
func Start(w io.Writer, o Options) *Bar {
	opts := []mpb.ContainerOption{mpb.WithOutput(w), mpb.WithRefreshRate(Tick)}
	if o.Width > 0 {
		opts = append(opts, mpb.WithWidth(o.Width))
	}
	b := &Bar{p: mpb.New(append(opts, o.Extra...)...), stop: make(chan struct{})}
	b.bar = b.p.AddBar(0, mpb.PrependDecorators(o.Prepend...), mpb.AppendDecorators(o.Append...))
	if o.Every != nil {
		b.done.Go(func() { b.tick(o.Every) })
	}
	return b
}

func (b *Bar) tick(every func(*mpb.Bar, time.Duration)) {
	t := time.NewTicker(Tick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-b.stop:
			return
		case now := <-t.C:
			every(b.bar, now.Sub(last))
			last = now
		}
	}
}

// Set sets the bar's count and total, for a command that reports as it goes.
func (b *Bar) Set(current, total int64) {
	if b == nil {
		return
	}
	b.bar.SetTotal(total, false)
	b.bar.SetCurrent(current)
}

// Write prints p above the bar at its next redraw.
func (b *Bar) Write(p []byte) (int, error) {
	if b == nil {
		return len(p), nil
	}
	return b.p.Write(p)
}

// Stop stops the ticks; Done and Abort stop them too.
func (b *Bar) Stop() {
	if b == nil {
		return
	}
	b.once.Do(func() { close(b.stop) })
	b.done.Wait()
}

// Done draws the last frame, complete at total (-1: at the current count), and waits for it.
func (b *Bar) Done(total int64) {
	if b == nil {
		return
	}
	b.Stop()
	if b.refresh != nil {
		b.refresh()
	}
	b.bar.SetTotal(total, true)
	b.p.Wait()
}

// Abort ends the bar of a command that failed: removed when drop, else left as it was.
func (b *Bar) Abort(drop bool) {
	if b == nil {
		return
	}
	b.Stop()
	b.bar.Abort(drop)
	b.p.Wait()
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Finish ends the bar of a command: complete at its count when ok, else Abort(drop).
func (b *Bar) Finish(ok, drop bool) {
	if ok {
		b.Done(-1)
	} else {
		b.Abort(drop)
	}
}
