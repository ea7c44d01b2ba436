// Package repair re-exports the chunks of a certified export run that do not reconcile with
// their source: what `wharf repair` runs.
//
// # What it promises
//
// Run derives its actions only from a reconcile report (package reconcile), given or made
// afresh: every chunk that is not a match (mismatch or unknown) is to be repaired, and
// nothing else. Without Options.Execute it only returns the plan. With it, it reads each such
// chunk again from the source with the SQL that read it (export.RereadParts: its range of the
// chunking key, within a delta run's cursor window), refused by name when the export's
// definition is not the run's or the source's columns changed, and writes each as a new part
// beside the old, named for a repair id of its own: no object is ever written over or
// deleted but manifest.json and _SUCCESS. Then it writes a new manifest.json in which each
// replaced part is listed under superseded (with the key of the part that replaced it), and
// then _SUCCESS for it: parts, manifest, marker, in that order, as every run. So a reader of
// the manifest (wharf parts, validate, load) reads each row once, and a reconcile after the
// repair compares the new parts.
//
// The new manifest replaces only the version read before the repair began (If-Match on its
// ETag): one an export or another repair wrote meanwhile is never written over, and the repair
// is refused. A run read from one snapshot is no longer one once some of its chunks are read
// again: the new manifest's consistency is chunk, with snapshot as the mode requested.
//
// Until the new manifest is written, the prefix is the run as it was, certified. A crash
// between the manifest and _SUCCESS leaves it not certified (the marker is the old
// manifest's); Run with Execute on such a prefix, whose manifest records a repair and whose
// only problem is the marker, finishes the repair by writing the marker, and says so.
//
// A run journaled in its export's commit log (state: bucket) is repaired under the export's
// writer lease, taken before anything is read and held to the end (export.HoldLog; a plan
// alone takes none): no run
// of the export and no other repair writes meanwhile, and a holder on another node refuses
// it (*lease.HeldError). Its certificate is an entry of that log, so the repair commits one
// (export.LogHold.Recertify) after its parts and before its manifest, which names it: a
// holder fenced past never writes its manifest. Stopped between that entry and the manifest,
// the prefix keeps the old manifest, still certified by the entry that certified it, and the
// next holder of the lease leaves the run as it was; stopped between the manifest and
// _SUCCESS, the next holder writes the marker.
//
// # Errors
//
// ErrRefused: nothing was written, and the message says why (the report is of another run,
// the run is not certified, its manifest changed while the repair started). A source, store or schema
// failure keeps its own code (package export's, package store's, package reconcile's).
package repair
