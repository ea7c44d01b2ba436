package main

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// completionTimeout bounds the listing behind one completion: a shell waits for it.
const completionTimeout = 5 * time.Second

// completeURLs makes the URL arguments of cmds complete as a shell user expects: a local path
// by the shell's own file completion, a store URL one level at a time, from a listing of the
// store (its common prefixes and keys, as 'wharf ls' shows them).
func (a *app) completeURLs(cmds ...*cobra.Command) {
	for _, c := range cmds {
		c.ValidArgsFunction = a.completeURL
	}
}

func (a *app) completeURL(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	_, rest, ok := driver.SplitScheme(toComplete)
	if !ok {
		return nil, cobra.ShellCompDirectiveDefault // a local path: the shell's file completion
	}
	slash := strings.LastIndexByte(toComplete, '/')
	if !strings.Contains(rest, "/") || slash < 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp // a bucket name: not listed
	}
	if a.log == nil { // completion runs without the command's setup
		a.log = slog.New(slog.DiscardHandler)
	}
	dir := toComplete[:slash+1]
	loc, err := a.parseURL(dir)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	s, err := a.open(ctx, loc.Root())
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	defer s.Close()
	page, err := s.List(ctx, &store.ListOptions{Prefix: loc.Key, Delimiter: "/", MaxKeys: 1000})
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, p := range page.Prefixes {
		out = append(out, dir+strings.TrimPrefix(p, loc.Key))
	}
	for _, o := range page.Objects {
		out = append(out, dir+strings.TrimPrefix(o.Key, loc.Key))
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}
