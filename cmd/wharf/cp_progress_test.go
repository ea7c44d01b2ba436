package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"

	"github.com/vbauerster/mpb/v8"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/progress"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

// TestCopyProgressBar draws the bar into a buffer as it would on a terminal: its last frame
// shows the files done of all, the bytes moved of the total, and a rate.
func TestCopyProgressBar(t *testing.T) {
	tasks := []transfer.Task{{Src: "a", Dst: "a", Size: 2 << 20}, {Src: "b", Dst: "b", Size: 1 << 20}}
	var out testenv.SyncBuffer
	c := &cpProgress{totalFiles: len(tasks)}
	c.start(&out, tasks, 100, mpb.WithAutoRefresh())
	c.Bytes(2 << 20)
	c.Done(tasks[0], store.ObjectInfo{}, nil)
	time.Sleep(3 * progress.Tick) // let the bar draw an unfinished frame
	if got := out.String(); !strings.Contains(got, "1/2 files") {
		t.Errorf("mid-copy frame lacks 1/2 files:\n%q", got)
	}
	c.Bytes(1 << 20)
	c.Done(tasks[1], store.ObjectInfo{}, nil)
	c.finish(true)
	got := out.String()
	for _, want := range []string{"2/2 files", "3.0 MiB / 3.0 MiB", "/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("final frame lacks %q:\n%q", want, got)
		}
	}
}

// The bytes of the last file are counted before it is done: the bar must not take its last
// frame then (it showed "0/1 files" once the copy had finished).
func TestCopyProgressBarLastFrameCountsTheLastFile(t *testing.T) {
	tasks := []transfer.Task{{Src: "a", Dst: "a", Size: 1 << 20}}
	var out testenv.SyncBuffer
	c := &cpProgress{totalFiles: len(tasks)}
	c.start(&out, tasks, 100, mpb.WithAutoRefresh())
	c.Bytes(1 << 20)
	time.Sleep(3 * progress.Tick) // the tick sees every byte counted, the file not yet done
	c.Done(tasks[0], store.ObjectInfo{}, nil)
	c.finish(true)
	got := out.String()
	last := got[strings.LastIndexAny(strings.TrimRight(got, "\r\n"), "\r\n")+1:]
	if !strings.Contains(last, "1/1 files") {
		t.Errorf("last frame %q, want 1/1 files (all output %q)", last, got)
	}
}

// A failed file is not counted done, and a failed copy's bar stops short of its total.
func TestCopyProgressBarFailure(t *testing.T) {
	tasks := []transfer.Task{{Src: "a", Dst: "a", Size: 1 << 20}, {Src: "b", Dst: "b", Size: 1 << 20}}
	var out testenv.SyncBuffer
	c := &cpProgress{totalFiles: len(tasks)}
	c.start(&out, tasks, 100, mpb.WithAutoRefresh())
	c.Bytes(1 << 20)
	c.Done(tasks[0], store.ObjectInfo{}, nil)
	c.Done(tasks[1], store.ObjectInfo{}, store.ErrNotExist)
	c.finish(false)
	got := out.String()
	if strings.Contains(got, "2/2 files") || strings.Contains(got, "2.0 MiB / 2.0 MiB") {
		t.Errorf("a failed copy drew as complete:\n%q", got)
	}
	if c.files.Load() != 1 {
		t.Errorf("files done = %d, want 1", c.files.Load())
	}
}

// Off a terminal (a buffer, --quiet, --format json) the copy draws nothing.
func TestProgressOnlyOnATerminal(t *testing.T) {
	var errb bytes.Buffer
	a := &app{streams: streams{err: &errb}, format: "pretty"}
	c := a.newProgress(&transfer.Plan{}, true)
	c.Bytes(10)
	c.finish(true)
	if c.bar != nil || errb.Len() != 0 {
		t.Errorf("drew a bar off a terminal: %q", errb.String())
	}
	b := a.newExportBar("orders")
	b.update(export.Progress{Chunks: 2, ChunksDone: 1})
	if b.bar != nil || errb.Len() != 0 {
		t.Errorf("drew an export bar off a terminal: %q", errb.String())
	}
}

func TestExportBarFigures(t *testing.T) {
	got := exportFigures(export.Progress{Chunks: 4, ChunksDone: 3, Rows: 1500, Bytes: 4 << 20}, 2*time.Second)
	for _, want := range []string{"3/4 chunks", "1500 rows", "4.0 MiB", "2.0 MiB/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("figures %q lack %q", got, want)
		}
	}
}
