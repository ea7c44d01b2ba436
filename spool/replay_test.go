package spool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplaySpool: a replay spool is format 2 with its replay id in spool.json, which Open and
// ReadStatus give back; a spool.json whose format and replay id disagree is not a spool, and a
// bad id is refused before anything is made.
func TestReplaySpool(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	info, err := InitWith(dir, InitOptions{Replay: "reprocess-2026.11"})
	must(t, err)
	if info.Format != FormatReplay || info.Replay != "reprocess-2026.11" {
		t.Errorf("InitWith: %+v", info)
	}
	meta := readText(t, filepath.Join(dir, MetaFile))
	if !strings.Contains(meta, `"format": 2`) || !strings.Contains(meta, `"replay": "reprocess-2026.11"`) {
		t.Errorf("spool.json:\n%s", meta)
	}
	s := open(t, dir, nil)
	if s.Info().Replay != "reprocess-2026.11" {
		t.Errorf("Open: replay %q", s.Info().Replay)
	}
	must(t, s.Close())
	if st, err := ReadStatus(dir); err != nil || st.Replay != "reprocess-2026.11" || st.Format != FormatReplay {
		t.Errorf("ReadStatus: %+v, %v", st, err)
	}
	if info, err := Init(filepath.Join(t.TempDir(), "prod")); err != nil || info.Format != Format || info.Replay != "" {
		t.Errorf("Init: %+v, %v", info, err)
	}

	for name, content := range map[string]string{
		"format 2 without a replay": strings.Replace(meta, `"replay": "reprocess-2026.11"`, `"replay": ""`, 1),
		"format 1 with a replay":    strings.Replace(meta, `"format": 2`, `"format": 1`, 1),
		"a bad replay id":           strings.Replace(meta, `"reprocess-2026.11"`, `"../prod"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			must(t, os.WriteFile(filepath.Join(dir, MetaFile), []byte(content), 0o644))
			_, err := Open(dir, OpenOptions{})
			wantKind(t, err, ErrNotSpool, filepath.Join(dir, MetaFile))
		})
	}

	bad := filepath.Join(t.TempDir(), "bad")
	_, err = InitWith(bad, InitOptions{Replay: "a/b"})
	wantKind(t, err, ErrInput, `replay id "a/b"`)
	if _, serr := os.Stat(bad); !os.IsNotExist(serr) {
		t.Errorf("a refused init made %s: %v", bad, serr)
	}
}
