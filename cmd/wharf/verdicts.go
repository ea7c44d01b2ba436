package main

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// verdicts is where probe verdicts are remembered: wharf/probes.json in the user's cache
// directory ($XDG_CACHE_HOME, else ~/.cache on Linux).
func (a *app) verdicts() *probe.Verdicts {
	dir := a.getenv("XDG_CACHE_HOME")
	if dir == "" {
		dir, _ = os.UserCacheDir()
	}
	return &probe.Verdicts{Path: filepath.Join(dir, "wharf", "probes.json")}
}

// requireCreate refuses a create-if-absent on s unless the store is proven to enforce it (a
// remembered probe verdict, else a probe run under base's directory, which is remembered).
func (a *app) requireCreate(ctx context.Context, s *store.Store, base string) error {
	dir := strings.TrimSuffix(base, "/")
	if !strings.HasSuffix(base, "/") {
		dir = path.Dir(dir)
	}
	if dir == "." {
		dir = ""
	}
	probed, err := a.verdicts().RequireCreate(ctx, s, s.Sub(dir))
	if probed {
		a.log.Info("probed the destination for --if-absent", "store", probe.StoreKey(s.Describe()))
	}
	if err != nil {
		return fmt.Errorf("--if-absent: %w", err)
	}
	return nil
}
