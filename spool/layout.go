package spool

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/wharfdata/wharf/internal/atomicfile"
)

// The names of a spool's layout.
const (
	MetaFile    = "spool.json"  // format version, epoch, creation time
	ReadyDir    = "ready"       // finalized files, ready/<dataset>/<first>_<last>.<ext>
	TmpDir      = "tmp"         // files being finalized
	CatalogFile = "catalog.log" // the append-only catalog
	LockFile    = "ship.lock"   // the owner lock; holds the owner's PID
)

// Format is the layout version of a spool (spool.json's "format").
const Format = 1

// FormatReplay is the layout version of a replay spool: Format's layout, with the replay's
// id in spool.json. A wharf from before replays reads only Format, and so refuses a replay
// spool rather than ship it into the production prefix.
const FormatReplay = 2

// Info is what spool.json records.
type Info struct {
	Dir     string    `json:"dir"`     // the spool's absolute path
	Format  int       `json:"format"`  // the layout version
	Epoch   uint64    `json:"-"`       // random, made once at Init; never 0
	Created time.Time `json:"created"` // when Init made the spool (UTC)
	// Replay is the id of the replay a replay spool holds files for (InitOptions.Replay);
	// "" for a production spool. ship keys a replay spool's files under
	// wharf/replays/{Replay}/, never under the production prefix.
	Replay string `json:"replay,omitempty"`
}

// EpochHex is the epoch as 16 hex digits, as object keys carry it.
func (i Info) EpochHex() string { return fmt.Sprintf("%016x", i.Epoch) }

// meta is spool.json. The epoch is a string of 16 hex digits: JSON tools that read numbers as
// doubles (jq, JavaScript) would round a 64-bit integer.
type meta struct {
	Format  int       `json:"format"`
	Epoch   string    `json:"epoch"`
	Created time.Time `json:"created"`
	Replay  string    `json:"replay,omitempty"`
}

// InitOptions say what kind of spool InitWith makes.
type InitOptions struct {
	// Replay makes a replay spool: its files are a replay (a range shipped again, such as a
	// re-processed one) that ship keys under wharf/replays/{Replay}/ only, and ships only when
	// told the same id. 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or
	// digit. "" makes a production spool.
	Replay string
}

// replayRE is a replay id: a safe key segment.
var replayRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidateReplay checks a replay id: 1 to 128 letters, digits, '.', '_' or '-', starting with
// a letter or digit. The error is ErrInput.
func ValidateReplay(id string) error {
	if !replayRE.MatchString(id) {
		return newErr("replay", "", ErrInput, fmt.Errorf("replay id %q: want 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", id))
	}
	return nil
}

// Init makes dir a new, empty spool: spool.json (format, a random epoch, the creation time),
// ready/, tmp/, an empty catalog.log and ship.lock. dir is created if it does not exist. Init
// on a spool is ErrExists (a spool is never reset); on a non-empty directory that is not a
// spool it is ErrNotSpool. A directory holding only what an interrupted Init left is finished.
// spool.json is written last, with create-if-absent, so of two concurrent Inits one wins.
func Init(dir string) (Info, error) { return InitWith(dir, InitOptions{}) }

// InitWith is Init, making the kind of spool opts says: a production spool, or a replay
// spool (format FormatReplay, its id in spool.json).
func InitWith(dir string, opts InitOptions) (Info, error) {
	const op = "init"
	if opts.Replay != "" {
		if err := ValidateReplay(opts.Replay); err != nil {
			return Info{}, err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Info{}, newErr(op, dir, ErrInput, err)
	}
	if err := prepareInitDir(abs); err != nil {
		return Info{}, err
	}
	for _, d := range []string{ReadyDir, TmpDir} {
		if err := os.Mkdir(filepath.Join(abs, d), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return Info{}, ioErr(op, filepath.Join(abs, d), err)
		}
	}
	for _, name := range []string{CatalogFile, LockFile} {
		p := filepath.Join(abs, name)
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return Info{}, ioErr(op, p, err)
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return Info{}, ioErr(op, p, err)
		}
	}
	info := Info{Dir: abs, Format: Format, Epoch: newEpoch(), Created: time.Now().UTC().Truncate(time.Millisecond), Replay: opts.Replay}
	if opts.Replay != "" {
		info.Format = FormatReplay
	}
	if err := writeMeta(abs, info); err != nil {
		return Info{}, err
	}
	return info, nil
}

// prepareInitDir creates dir, or checks that it is empty but for an interrupted Init's leftovers.
func prepareInitDir(dir string) error {
	const op = "init"
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return ioErr(op, dir, err)
		}
		return syncDir(filepath.Dir(dir))
	case err != nil:
		return ioErr(op, dir, err)
	case !fi.IsDir():
		return newErr(op, dir, ErrNotSpool, errors.New("not a directory"))
	}
	if _, err := os.Stat(filepath.Join(dir, MetaFile)); err == nil {
		info, rerr := readInfo(op, dir)
		if rerr != nil {
			return rerr
		}
		return newErr(op, dir, ErrExists, fmt.Errorf("epoch %s, made %s; a spool is never reset (remove the directory by hand to start over)",
			info.EpochHex(), info.Created.Format(time.RFC3339)))
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return ioErr(op, dir, err)
	}
	for _, de := range des {
		if !initLeftover(dir, de) {
			return newErr(op, dir, ErrNotSpool, fmt.Errorf("the directory is not empty (it holds %q) and is not a spool; give an empty or new directory", de.Name()))
		}
	}
	return nil
}

// initLeftover reports whether de is something an interrupted Init may have left.
func initLeftover(dir string, de fs.DirEntry) bool {
	name := de.Name()
	switch {
	case name == ReadyDir || name == TmpDir:
		sub, err := os.ReadDir(filepath.Join(dir, name))
		return de.IsDir() && err == nil && len(sub) == 0
	case name == CatalogFile:
		fi, err := de.Info()
		return err == nil && fi.Mode().IsRegular() && fi.Size() == 0
	case name == LockFile:
		return de.Type().IsRegular()
	}
	return strings.HasPrefix(name, "."+MetaFile+".")
}

func newEpoch() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		if e := binary.BigEndian.Uint64(b[:]); e != 0 {
			return e
		}
	}
}

// writeMeta writes spool.json with create-if-absent (a hard link of a synced temporary file,
// through atomicfile), then syncs the directory.
func writeMeta(dir string, info Info) error {
	const op = "init"
	b, err := json.MarshalIndent(meta{Format: info.Format, Epoch: info.EpochHex(), Created: info.Created, Replay: info.Replay}, "", "  ")
	if err != nil {
		return newErr(op, dir, ErrIO, err)
	}
	final := filepath.Join(dir, MetaFile)
	f, err := atomicfile.Create(final)
	if err != nil {
		return ioErr(op, dir, err)
	}
	defer f.Abort()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return ioErr(op, f.TempName(), err)
	}
	if err := f.Commit(true); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return newErr(op, dir, ErrExists, errors.New("another init made it at the same time"))
		}
		return ioErr(op, final, err)
	}
	return nil
}

// readInfo reads and checks spool.json and the layout of the spool at dir (absolute).
func readInfo(op, dir string) (Info, error) {
	metaPath := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(metaPath)
	if err != nil {
		return Info{}, notSpoolErr(op, dir, metaPath, err)
	}
	var m meta
	if err := json.Unmarshal(b, &m); err != nil {
		return Info{}, newErr(op, metaPath, ErrNotSpool, fmt.Errorf("not a spool's metadata: %v", err))
	}
	switch {
	case m.Format != Format && m.Format != FormatReplay:
		return Info{}, newErr(op, metaPath, ErrNotSpool, fmt.Errorf("format %d: this wharf reads formats %d and %d (a replay spool)", m.Format, Format, FormatReplay))
	case (m.Format == FormatReplay) != (m.Replay != ""):
		return Info{}, newErr(op, metaPath, ErrNotSpool, fmt.Errorf("format %d with replay %q: a replay spool is format %d and names its replay, a production spool is format %d and names none", m.Format, m.Replay, FormatReplay, Format))
	case m.Replay != "" && ValidateReplay(m.Replay) != nil:
		return Info{}, newErr(op, metaPath, ErrNotSpool, fmt.Errorf("replay id %q is not a replay id", m.Replay))
	}
	epoch, err := strconv.ParseUint(m.Epoch, 16, 64)
	if err != nil || len(m.Epoch) != 16 || epoch == 0 {
		return Info{}, newErr(op, metaPath, ErrNotSpool, fmt.Errorf("epoch %q: want 16 hex digits, not all zero", m.Epoch))
	}
	for _, p := range []struct {
		name string
		dir  bool
	}{{ReadyDir, true}, {TmpDir, true}, {CatalogFile, false}} {
		path := filepath.Join(dir, p.name)
		fi, err := os.Stat(path)
		if err != nil {
			return Info{}, notSpoolErr(op, dir, path, err)
		}
		if fi.IsDir() != p.dir {
			return Info{}, newErr(op, path, ErrNotSpool, errors.New("the spool's layout is damaged: wrong file type"))
		}
	}
	return Info{Dir: dir, Format: m.Format, Epoch: epoch, Created: m.Created.UTC(), Replay: m.Replay}, nil
}

// notSpoolErr explains a missing part of a spool's layout: ErrNotSpool with what to do; a
// permission error stays store.ErrForbidden.
func notSpoolErr(op, dir, path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return ioErr(op, path, err)
	}
	if _, serr := os.Stat(dir); serr != nil {
		return newErr(op, dir, ErrNotSpool, fmt.Errorf("no such directory; run `wharf spool init %s` to make a spool", dir))
	}
	if filepath.Base(path) == MetaFile {
		return newErr(op, dir, ErrNotSpool, fmt.Errorf("no %s here; run `wharf spool init %s` to make a spool", MetaFile, dir))
	}
	return newErr(op, path, ErrNotSpool, errors.New("missing: the spool's layout is damaged"))
}

// syncDir fsyncs a directory, so that the entries created, renamed or removed in it persist.
func syncDir(dir string) error {
	if err := atomicfile.SyncDir(atomicfile.OS, dir); err != nil {
		return ioErr("sync", dir, err)
	}
	return nil
}

var (
	datasetRE = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
	extRE     = regexp.MustCompile(`^[a-z0-9]{1,16}(\.[a-z0-9]{1,16})?$`)
)

// ValidateDataset checks a dataset name: 1 to 64 of a-z, 0-9, _ and -. The error is ErrInput.
func ValidateDataset(name string) error { return checkDataset("dataset", name) }

func checkDataset(op, name string) error {
	if !datasetRE.MatchString(name) {
		return newErr(op, "", ErrInput, fmt.Errorf("dataset %q: want 1 to 64 of a-z, 0-9, _ and -", name))
	}
	return nil
}

// ValidateExt checks a file extension: 1 to 16 of a-z and 0-9, optionally followed by a dot
// and another such segment (ndjson.gz). The error is ErrInput.
func ValidateExt(ext string) error { return checkExt("extension", "", ext) }

func checkExt(op, path, ext string) error {
	if !extRE.MatchString(ext) {
		return newErr(op, path, ErrInput, fmt.Errorf("extension %q: want 1 to 16 of a-z and 0-9, optionally a dot and another such part (ndjson.gz); rename the file or give the extension (--ext)", ext))
	}
	return nil
}

// compressed are the extensions that name a compression, not a format: ExtOf keeps the one
// before them too.
var compressed = map[string]bool{"gz": true, "zst": true, "bz2": true, "xz": true, "lz4": true, "br": true, "snappy": true}

// ExtOf returns the extension a file named name is spooled with: what follows its last dot,
// lowercased, with the one before when the last names a compression ("x.ndjson.gz" is
// "ndjson.gz"), or "bin" when the name has none. The result may still fail ValidateExt.
func ExtOf(name string) string {
	parts := strings.Split(strings.TrimLeft(strings.ToLower(filepath.Base(name)), "."), ".")
	n := len(parts)
	switch {
	case n < 2 || parts[n-1] == "":
		return "bin"
	case compressed[parts[n-1]] && n >= 3:
		return parts[n-2] + "." + parts[n-1]
	}
	return parts[n-1]
}

// readyName is a file's path in the spool, relative to it, with forward slashes.
func readyName(dataset string, first, last uint64, ext string) string {
	return fmt.Sprintf("%s/%s/%020d_%020d.%s", ReadyDir, dataset, first, last, ext)
}
