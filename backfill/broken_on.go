//go:build wharftest

package backfill

// brokenPlan switches on a deliberately broken backfill, only in a build with the wharftest
// tag, so that the fleet's history check can show that it fails one: the worker that wins
// the leader lease plans again without reading the plan that is there, a worker of a
// superseded plan goes on taking splits, and the leader writes the manifest before it checks
// that the job's current plan is its own (as wharf did before a job had one plan for its
// life).
var brokenPlan bool

// BreakForTest switches the broken variant on: what is "plan" (BreakForTest exists only in a
// build with the wharftest tag).
func BreakForTest(what string) { brokenPlan = what == "plan" }
