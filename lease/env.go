package lease

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// Env is what a command hands the lease package to open a lease's store itself: the store
// options it built for every store it opens (the environment, the endpoint allow-list, the
// config file's named stores, its global store flags, the logger, decorators in tests), what
// remembers probe verdicts, and the logger.
type Env struct {
	Store    *store.Config
	Verdicts *probe.Verdicts
	Logger   *slog.Logger
}

// OpenStore opens the store raw names (a URL, a local path, a named store) with e.Store. A
// failure to open it names raw; the caller closes the store.
func (e Env) OpenStore(ctx context.Context, raw string) (*store.Store, error) {
	loc, err := e.Store.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	s, err := store.OpenLocation(ctx, loc, e.Store)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	if e.Logger != nil {
		e.Logger.Debug("opened store", "url", loc.String(), "endpoint", s.Describe().Endpoint)
	}
	return s, nil
}

// OpenURL opens the store raw names and a Leaser over it with cfg, as Open does (probing the
// store unless e.Verdicts remembers a fresh verdict). A failure names raw; the caller closes
// the Leaser's Store.
func OpenURL(ctx context.Context, raw string, cfg Config, e Env) (*Leaser, error) {
	s, err := e.OpenStore(ctx, raw)
	if err != nil {
		return nil, err
	}
	l, err := Open(ctx, s, cfg, &Options{Logger: e.Logger, Verdicts: e.Verdicts})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	return l, nil
}
