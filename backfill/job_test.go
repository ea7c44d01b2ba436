package backfill

import (
	"context"
	"errors"
	"testing"
)

func TestSoloStdoutDeliversEveryRecordOfEveryKind(t *testing.T) {
	src := memStore()
	c := fill(t, src, "logs/", 60, 400, "plain", "gz", "gzmulti", "zst", "zstmulti")
	put(t, src, "other/x.ndjson", []byte("{\"not\":\"mine\"}\n"))
	var out syncBuffer
	cfg := testConfig("mem://src/logs/", "-")
	j, err := runJob(context.Background(), t, cfg, NewSolo(), src, NewStdout(&out, cfg.CommitInterval), false)
	if err != nil {
		t.Fatal(err)
	}
	c.check(t, out.Bytes(), true)
	st := j.Status()
	if st.State != StateSucceeded || st.Splits.Done != st.Splits.Planned || st.Splits.Planned < 9 || st.Records != int64(c.total) {
		t.Fatalf("status %+v, want every split done and %d records", st.Splits, c.total)
	}
}

func TestSecondRunOfAFinishedJobIsAlreadyComplete(t *testing.T) {
	src := memStore()
	fill(t, src, "logs/", 10, 50, "plain")
	coord := NewSolo()
	cfg := testConfig("mem://src/logs/", "-")
	var out syncBuffer
	if _, err := runJob(context.Background(), t, cfg, coord, src, NewStdout(&out, cfg.CommitInterval), false); err != nil {
		t.Fatal(err)
	}
	n := len(out.Bytes())
	_, err := runJob(context.Background(), t, cfg, coord, src, NewStdout(&out, cfg.CommitInterval), false)
	if !errors.Is(err, ErrAlreadyComplete) || len(out.Bytes()) != n {
		t.Fatalf("second run: %v, %d bytes more out; want ErrAlreadyComplete and nothing", err, len(out.Bytes())-n)
	}
	// A replan of the unchanged prefix makes the same splits: all done, nothing read.
	if _, err := runJob(context.Background(), t, cfg, coord, src, NewStdout(&out, cfg.CommitInterval), true); err != nil || len(out.Bytes()) != n {
		t.Fatalf("replan: %v, %d bytes more out; want nothing read again", err, len(out.Bytes())-n)
	}
}
