package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/internal/yamlconf"
	"github.com/wharfdata/wharf/internal/yamlconf/yamlflag"
	"github.com/wharfdata/wharf/ship"
)

// registerShipFlags declares the flags of `wharf ship`: one per key of the ship: section,
// as ship.Config's fields declare them.
func registerShipFlags(fl *pflag.FlagSet) { yamlflag.Add(fl, ship.DefaultConfig()) }

// shipConfig builds the service's config in the one order: the defaults, then the
// environment (WHARF_NODE_ID), then the config file's ship: section, then the flags given.
func (a *app) shipConfig(fl *pflag.FlagSet) (ship.Config, error) {
	cfg := ship.DefaultConfig()
	cfg.FromEnv(a.getenv)
	where := "ship"
	dec := &yamlconf.Decoder{Getenv: a.getenv}
	if a.configPath != "" {
		c, err := a.configFile()
		if err != nil {
			return ship.Config{}, err
		}
		if c.file.Ship == nil {
			return ship.Config{}, configErr(&yamlconf.Error{File: c.path, Msg: "no ship: section"})
		}
		cfg = *c.file.Ship
		cfg.Rebase(c.dir)
		where = c.path + ": ship"
	}
	if err := yamlflag.Apply(fl, &cfg, dec); err != nil {
		return ship.Config{}, usageErr(fmt.Errorf("ship: %w", err))
	}
	if wd, werr := os.Getwd(); werr == nil {
		cfg.Rebase(wd) // paths given as flags are relative to the working directory
	}
	cfg.Store = *a.storeConfig(&cfg.Store)
	if err := cfg.Check(); err != nil {
		return ship.Config{}, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, nil
}
