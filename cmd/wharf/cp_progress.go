package main

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/wharfdata/wharf/internal/progress"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

// cpProgress counts what a copy moves and, on a terminal, draws it as a progress bar with
// bytes, files, rate and ETA. It implements transfer.Progress. It also prints a line for each
// file copied (line, when set): to out as each file is done, or, when out is the terminal
// the bar is drawn on, above the bar at its next redraw. Copies count bytes in atomics; only
// the bar's tick reads them, so a fast copy pays nothing per read.
type cpProgress struct {
	bytes, files atomic.Int64
	totalFiles   int

	line    func(transfer.Task, store.ObjectInfo) []byte
	out     io.Writer
	viaBar  bool // lines go above the bar
	mu      sync.Mutex
	pending []byte // lines waiting for the bar's next redraw

	bar *progress.Bar
}

// newProgress returns the progress of p: a bar on stderr when it is a terminal and output is
// for people, else a counter that draws nothing (and for a stream, which reports none).
func (a *app) newProgress(p *transfer.Plan, recursive bool) *cpProgress {
	c := &cpProgress{totalFiles: len(p.Tasks), line: a.copiedLine(p, recursive), out: a.out}
	if !a.drawsBars() || p.Stream() {
		return c
	}
	c.viaBar = progress.IsTerminal(a.out)
	c.start(a.err, p.Tasks, 0)
	return c
}

// start draws the bar to w (width 0: the terminal's), with extra container options (tests
// force a terminal onto a buffer).
func (c *cpProgress) start(w io.Writer, tasks []transfer.Task, width int, extra ...mpb.ContainerOption) {
	var total int64
	for _, t := range tasks {
		total += max(t.Size, 0)
	}
	files := decor.Any(func(decor.Statistics) string {
		return fmt.Sprintf("%d/%d files", c.files.Load(), c.totalFiles)
	}, decor.WCSyncSpaceR)
	c.bar = progress.Start(w, progress.Options{Width: width, Extra: extra,
		Prepend: []decor.Decorator{files, decor.Counters(decor.SizeB1024(0), "% .1f / % .1f", decor.WCSyncSpace)},
		Append: []decor.Decorator{decor.EwmaSpeed(decor.SizeB1024(0), "% .1f", 30, decor.WCSyncSpace),
			decor.Name(" ETA "), decor.EwmaETA(decor.ET_STYLE_GO, 30)},
		Every: func(b *mpb.Bar, since time.Duration) {
			b.EwmaSetCurrent(c.bytes.Load(), since)
			c.flush()
		},
	})
	c.bar.Set(0, max(total, 1))
}

// flush hands the lines waiting to the bar, which prints them above itself.
func (c *cpProgress) flush() {
	c.mu.Lock()
	b := c.pending
	c.pending = nil
	c.mu.Unlock()
	if len(b) > 0 {
		_, _ = c.bar.Write(b)
	}
}

// Bytes implements transfer.Progress.
func (c *cpProgress) Bytes(n int64) { c.bytes.Add(n) }

// Done implements transfer.Progress.
func (c *cpProgress) Done(t transfer.Task, info store.ObjectInfo, err error) {
	if err != nil {
		return
	}
	c.files.Add(1)
	if c.line == nil {
		return
	}
	b := c.line(t, info)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.viaBar {
		c.pending = append(c.pending, b...)
		return
	}
	_, _ = c.out.Write(b)
}

// finish draws the bar's last state and removes it when the copy failed.
func (c *cpProgress) finish(ok bool) {
	if c.bar == nil {
		return
	}
	c.bar.Stop()
	c.flush()
	if ok {
		c.bar.Done(c.bytes.Load())
	} else {
		c.bar.Abort(true)
	}
}
