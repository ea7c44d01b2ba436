package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/progress"
	"github.com/wharfdata/wharf/internal/textfmt"
)

// drawsBars reports whether a long command draws its progress bar on stderr: only on a
// terminal, with output for people.
func (a *app) drawsBars() bool {
	return !a.quiet && a.format == "pretty" && progress.IsTerminal(a.err)
}

// exportBar draws an export's progress on a terminal: chunks done of all, rows, bytes and the
// byte rate. Off a terminal, with --quiet or --format json it draws nothing.
type exportBar struct {
	bar  *progress.Bar
	mu   sync.Mutex
	last export.Progress
}

func (a *app) newExportBar(name string) *exportBar {
	b := &exportBar{}
	if a.drawsBars() {
		b.bar = progress.StartFigures(a.err, 0, true, func(elapsed time.Duration) progress.Figures {
			b.mu.Lock()
			p := b.last
			b.mu.Unlock()
			return progress.Figures{Label: name, Text: exportFigures(p, elapsed), Done: int64(p.ChunksDone), Total: int64(p.Chunks)}
		})
	}
	return b
}

func exportFigures(p export.Progress, elapsed time.Duration) string {
	rate := float64(p.Bytes) / max(elapsed.Seconds(), 0.001)
	return fmt.Sprintf("%d/%d chunks  %d rows  %s  %s/s", p.ChunksDone, p.Chunks, p.Rows,
		textfmt.Size(p.Bytes), textfmt.Size(int64(rate)))
}

// update is export.Options.Progress: called from the export's workers after each chunk.
func (b *exportBar) update(p export.Progress) {
	b.mu.Lock()
	b.last = p
	b.mu.Unlock()
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
