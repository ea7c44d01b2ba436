package repair

import "github.com/wharfdata/wharf/errcode"

// ErrRefused: the run was not repaired, and nothing was written.
var ErrRefused = errcode.New(errcode.Def{Name: "WHARF_REPAIR_REFUSED", Text: "the run cannot be repaired",
	Exit: errcode.ExitFailed, Class: errcode.Fatal, Section: "Repair",
	Meaning: "`wharf repair` wrote nothing: the report given with --report is not of the run at the prefix, or the prefix holds no certified run of the export, or the manifest there changed while the repair ran (an export or another repair wrote it). The message says which. A definition or schema that changed since the run is refused with its own code.",
	Remedy:  "Reconcile the prefix again and repair from that report, or export a new run."})
