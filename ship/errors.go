package ship

import (
	"fmt"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/spool"
)

// ErrReplayIntoProduction: the spool is a replay spool and the service was not told the
// replay (Config.Replay): its files would land in the production prefix.
var ErrReplayIntoProduction = errcode.New(errcode.Def{Name: "WHARF_REPLAY_INTO_PRODUCTION",
	Text: "a replay spool may not ship into the production prefix", Exit: errcode.ExitUsage, Class: errcode.Fatal, Standing: true, Section: "Ship",
	Meaning: "`wharf ship` was started without `--replay` (`replay:`) on a replay spool (made by `wharf spool init --replay ID`). Its files are a replay, files shipped again, and would land under `wharf/v1/`, beside production's. Nothing was shipped. The message names the spool and its replay id.",
	Remedy:  "Run `wharf ship --replay ID` with the id the message names: the replay's files go under `wharf/replays/ID/`. To ship production files, use the production spool."})

// ErrReplayMismatch: Config.Replay names a replay the spool is not a spool of (a production
// spool, or another replay's).
var ErrReplayMismatch = errcode.New(errcode.Def{Name: "WHARF_REPLAY_MISMATCH",
	Text: "the spool is not a spool of this replay", Exit: errcode.ExitUsage, Class: errcode.Fatal, Standing: true, Section: "Ship",
	Meaning: "`wharf ship --replay ID` was pointed at a spool that is not ID's replay spool: a production spool (its files would be hidden from the production prefix under `wharf/replays/ID/`), or another replay's. Nothing was shipped. The message names the spool, what it is and the id given.",
	Remedy:  "Give the replay spool of ID (`wharf spool status` shows a spool's replay id), or the spool's own id; ship a production spool without `--replay`. Make a replay's spool with `wharf spool init --replay ID DIR`."})

// ErrUploadTruncated: the object at a file's key carries the file's sha256 but another size:
// the upload's body did not arrive whole. Transient: the service writes the file over it.
var ErrUploadTruncated = errcode.New(errcode.Def{Name: "WHARF_SHIP_UPLOAD_TRUNCATED",
	Text: "the object at the key is a damaged copy of the file", Exit: errcode.ExitFailed, Class: errcode.Operator, Section: "Ship",
	Meaning: "The object at a file's key carries the file's `wharf-sha256` (sent in the headers of the put) but another size: the upload's body did not arrive whole, because a proxy or the network dropped part of it and the store kept what came. It is the file's own upload, not another spool's or machine's object (that is `WHARF_OBJECT_KEY_COLLISION`). The message names the key, both sizes, the sha256 and the node. The service writes the file over it (under If-Match on its ETag where the store enforces conditional writes, with a plain put in overwrite mode) and verifies it again; each failed attempt is retried with the backoff, and three in a row turn `/healthz` unhealthy.",
	Remedy:  "Nothing, if it passes. If it keeps coming back, something between wharf and the store cuts request bodies (a proxy's body size limit, a broken middlebox): fix it or ship around it."})

// checkReplay refuses a spool and a Config.Replay that disagree: a replay spool shipped
// without its id would ship into the production prefix; a production spool shipped as a
// replay would hide its files from it.
func (s *Shipper) checkReplay(info spool.Info) error {
	switch {
	case info.Replay == s.cfg.Replay:
		return nil
	case s.cfg.Replay == "":
		return errcode.E("ship", info.Dir, ErrReplayIntoProduction, fmt.Errorf(
			"the spool is a replay spool (replay %s): shipping it without --replay %s would put its files under %s/, where production's are; run with --replay %s to ship them under %s/%s/",
			info.Replay, info.Replay, KeyRoot, info.Replay, ReplayRoot, info.Replay))
	case info.Replay == "":
		return errcode.E("ship", info.Dir, ErrReplayMismatch, fmt.Errorf(
			"--replay %s was given, but the spool is a production spool: its files belong under %s/, not %s/%s/; ship it without --replay, or give replay %s's own spool (made with `wharf spool init --replay %s DIR`)",
			s.cfg.Replay, KeyRoot, ReplayRoot, s.cfg.Replay, s.cfg.Replay, s.cfg.Replay))
	}
	return errcode.E("ship", info.Dir, ErrReplayMismatch, fmt.Errorf(
		"--replay %s was given, but the spool is replay %s's spool; give --replay %s, or replay %s's own spool",
		s.cfg.Replay, info.Replay, info.Replay, s.cfg.Replay))
}
