// Package file is the local filesystem backend: the objects of file:///abs/dir are the regular
// files below that directory, their keys the slash-separated paths relative to it.
//
// # Promises
//
// Writes are atomic and durable: the body goes to a temporary file under the root's hidden
// .wharf-meta/tmp directory, is fsynced, renamed (or, for create-if-absent, hard-linked) into
// place, and the directory is fsynced. A failed or cancelled Put leaves nothing at the key and
// no temporary file. A process killed mid-write cannot remove its temporary file: the first
// write through a Store removes those not modified for a day.
//
// Content type, standard headers (Cache-Control, Content-Disposition, Content-Encoding,
// Content-Language) and user metadata are kept in a sidecar JSON file per object under
// .wharf-meta/obj, written the same way. The sidecar records the file's size, modification time
// and inode; a sidecar that no longer matches its file (the file was edited or replaced by
// something other than wharf) is ignored, and the object then has an ETag derived from those
// three values, so an ETag changes whenever a file is written or replaced. It does not prove
// the bytes: a file edited in place whose modification time is put back (touch -r, a restore
// that keeps times) keeps its ETag. The store says so (VerifyByHash, driver.HashVerifier), and
// callers that vouch for content hash it here, which on a local disk costs about a read. Files
// dropped in by hand are listed and readable like any other object.
//
// Conditional writes (IfNoneMatch, IfMatch, conditional Delete) and pinned reads hold between
// processes on one machine: every check-and-replace runs under an exclusive flock on
// .wharf-meta/lock, and create-if-absent places the file with link(2), which never replaces an
// existing file. The lock does not hold across machines on a network file system; Describe
// reports the mount type so the probe can tell.
//
// A file store cannot hold both "a" and "a/b" (a is a file or a directory); the second is
// refused. Directories left empty by Delete are removed. Keys with a .wharf-meta segment at any
// depth, keys that would leave the root, and keys through a symbolic link are refused, and no
// .wharf-meta directory is ever listed, at any depth: a store's bookkeeping is never data,
// whichever root wrote it.
//
// # URLs
//
//	file:///abs/dir/key
//	/abs/dir/key
//	./relative/dir/key
//
// The three spellings name the same place. Its store is rooted at the nearest directory at or
// above the path that already is a file store (holds .wharf-meta: made by MakeBucket, which is
// wharf mb, or by an earlier write), so that every command sees one file with the same key,
// ETag and metadata however it is named; the rest of the path is the key. Without such a
// directory the path itself is the root, and a path naming one file is rooted at its parent.
//
// # Errors
//
//   - driver.ErrBucketMissing: the root directory does not exist (or is not a directory), for
//     every operation but MakeBucket, which creates it. The error names the directory. Opened
//     with driver.Common.CreateDir (store.Config.CreateDir: a job's output directory), the
//     store instead makes a missing root at its first write and reads it as empty until then
//     (no object, an empty listing, a delete of nothing).
//   - driver.ErrNotExist: no regular file at the key.
//   - driver.ErrPreconditionFailed: a failed IfNoneMatch or IfMatch on Put, Copy or Delete, or a
//     pinned Get whose ETag no longer matches. IfMatch on a missing key fails the condition.
//   - driver.ErrForbidden: permission denied, or a read-only file system.
//   - driver.ErrKeyInvalid: a key that is invalid, under .wharf-meta, through a symbolic link, or
//     too long for the file system.
//   - driver.ErrUnsupported: a key that collides with a directory of other keys, or the reverse.
//   - driver.ErrUnavailable: any other I/O failure (a full disk, say), or a Put body that cannot
//     be read (a body error that already carries a store kind passes through).
//
// A cancelled context returns the context's error, unwrapped.
package file
