// Package progress draws the progress bar of a command that runs for a while (cp, export,
// backfill) on a terminal: one bar, redrawn at a fixed tick from counters the command keeps,
// so that the work itself pays nothing per byte; lines printed above it; and a last frame
// that says how it ended. A nil *Bar draws nothing, which is what a command holds when its
// output is not a terminal, is JSON, or is quiet.
package progress
