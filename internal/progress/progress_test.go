package progress

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// A nil bar is what a command holds off a terminal: every method does nothing.
func TestNilBarDrawsNothing(t *testing.T) {
	var b *Bar
	b.Set(1, 2)
	if n, err := b.Write([]byte("x")); n != 1 || err != nil {
		t.Errorf("Write = %d, %v", n, err)
	}
	b.Stop()
	b.Done(-1)
	b.Abort(true)
}

// The ticks carry the command's counter onto the bar, lines print above it, and Done's
// last frame is complete; after Done no tick runs.
func TestBarTicksPrintsAndCompletes(t *testing.T) {
	var out testenv.SyncBuffer
	var mu sync.Mutex
	count, ticks := int64(0), 0
	b := Start(&out, Options{Width: 60, Extra: []mpb.ContainerOption{mpb.WithAutoRefresh()},
		Prepend: []decor.Decorator{decor.CountersNoUnit("%d/%d")},
		Every: func(bar *mpb.Bar, _ time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			ticks++
			bar.SetCurrent(count)
		}})
	b.Set(0, 10)
	mu.Lock()
	count = 4
	mu.Unlock()
	time.Sleep(3 * Tick)
	if _, err := b.Write([]byte("a line above\n")); err != nil {
		t.Fatal(err)
	}
	b.Done(-1)
	mu.Lock()
	after := ticks
	mu.Unlock()
	time.Sleep(2 * Tick)
	got := out.String()
	for _, want := range []string{"4/10", "a line above", "4/4"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%q", want, got)
		}
	}
	if after == 0 || ticks != after {
		t.Errorf("ticks: %d before Done, %d after", after, ticks)
	}
}

// A figures bar shows what its job reports at each tick, and its last frame the job's end,
// even when the end came between two ticks.
func TestFiguresBarShowsTheLastFigures(t *testing.T) {
	var out testenv.SyncBuffer
	var mu sync.Mutex
	done := int64(1)
	b := StartFigures(&out, 80, true, func(time.Duration) Figures {
		mu.Lock()
		defer mu.Unlock()
		return Figures{Label: "orders", Text: fmt.Sprintf("%d/4 chunks", done), Done: done, Total: 4}
	}, mpb.WithAutoRefresh())
	time.Sleep(3 * Tick)
	mu.Lock()
	done = 4
	mu.Unlock()
	b.Done(-1)
	got := out.String()
	for _, want := range []string{"orders", "1/4 chunks", "25 %", "4/4 chunks", "100 %"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%q", want, got)
		}
	}
}
