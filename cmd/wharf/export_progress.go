package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8/decor"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/progress"
)

// exportBar draws an export's progress on a terminal: chunks done of all, rows, bytes and the
// byte rate. Off a terminal, with --quiet or --format json it draws nothing.
type exportBar struct {
	bar   *progress.Bar
	start time.Time

	mu   sync.Mutex
	last export.Progress
}

func (a *app) newExportBar(name string) *exportBar {
	b := &exportBar{start: time.Now()}
	if a.quiet || a.format != "pretty" || !progress.IsTerminal(a.err) {
		return b
	}
	b.bar = progress.Start(a.err, progress.Options{
		Prepend: []decor.Decorator{decor.Name(name, decor.WCSyncSpaceR),
			decor.Any(func(decor.Statistics) string { return b.stats() }, decor.WCSyncSpaceR)},
		Append: []decor.Decorator{decor.Percentage(decor.WCSyncSpace)}})
	return b
}

func (b *exportBar) stats() string {
	b.mu.Lock()
	p := b.last
	b.mu.Unlock()
	rate := float64(p.Bytes) / max(time.Since(b.start).Seconds(), 0.001)
	return fmt.Sprintf("%d/%d chunks  %d rows  %s  %s/s", p.ChunksDone, p.Chunks, p.Rows,
		humanSize(p.Bytes), humanSize(int64(rate)))
}

// update is export.Options.Progress: called from the export's workers after each chunk.
func (b *exportBar) update(p export.Progress) {
	b.mu.Lock()
	b.last = p
	b.mu.Unlock()
	b.bar.Set(int64(p.ChunksDone), int64(p.Chunks))
}

// finish draws the last state, or removes the bar when the run failed.
func (b *exportBar) finish(ok bool) {
	if ok {
		b.bar.Done(-1)
	} else {
		b.bar.Abort(true)
	}
}

// displayPath shows p relative to the working directory when it is under it.
func displayPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return rel
}
