package progress

import (
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Figures is what a job's bar shows: a label before it, a line of figures, and how much of
// the whole is done. A Total of 0 (not known yet) is drawn as 1.
type Figures struct {
	Label, Text string
	Done, Total int64
}

// StartFigures draws a bar to w (width 0: the terminal's) whose label, figures and count are
// what figures returns, asked once a tick with the time since the bar started (for rates);
// percent appends the share done. It is the bar of a job that reports its state rather than
// counting bytes (export, backfill). Done asks figures once more, so the last frame shows
// the end.
func StartFigures(w io.Writer, width int, percent bool, figures func(elapsed time.Duration) Figures, extra ...mpb.ContainerOption) *Bar {
	start := time.Now()
	var mu sync.Mutex
	shown := figures(0)
	show := func(part func(Figures) string) decor.Decorator {
		return decor.Any(func(decor.Statistics) string {
			mu.Lock()
			defer mu.Unlock()
			return part(shown)
		}, decor.WCSyncSpaceR)
	}
	var appended []decor.Decorator
	if percent {
		appended = append(appended, decor.Percentage(decor.WCSyncSpace))
	}
	set := func(bar *mpb.Bar, _ time.Duration) {
		f := figures(time.Since(start))
		mu.Lock()
		shown = f
		mu.Unlock()
		bar.SetTotal(max(f.Total, 1), false)
		bar.SetCurrent(f.Done)
	}
	b := Start(w, Options{Width: width, Extra: extra, Append: appended, Every: set,
		Prepend: []decor.Decorator{show(func(f Figures) string { return f.Label }), show(func(f Figures) string { return f.Text })}})
	b.refresh = func() { set(b.bar, 0) }
	return b
}
