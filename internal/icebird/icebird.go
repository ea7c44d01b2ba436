package icebird

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wharfdata/wharf/store"
)

//go:embed read.mjs
var script string

// Options say where icebird is and what to read.
type Options struct {
	// Node is the node binary (default: node on the PATH).
	Node string
	// Dir is the folder holding node_modules/icebird (scripts/install-servers.sh icebird puts
	// it in the test cache; testenv.Icebird returns it).
	Dir string
	// Metadata is the metadata file to read ("v2.metadata.json"); empty reads the one
	// metadata/version-hint.text names, as icebird does.
	Metadata string
	// Values asks for every value in Result.Values, not only the checksums.
	Values bool
}

// Result is what icebird read of a table (Read), or what the Go side expects (FromArrow).
type Result struct {
	// Metadata is the metadata file read ("v3.metadata.json"); empty from FromArrow.
	Metadata string `json:"metadata"`
	// Rows is the number of rows.
	Rows int64 `json:"rows"`
	// Columns are the table's columns in schema order, with their checksums.
	Columns []Column `json:"columns"`
	// Values are the rows, each value in canonical form (nil for null), in the order read;
	// only when asked for (Options.Values; FromArrow always fills them).
	Values [][]*string `json:"values,omitempty"`
	// Fetched are the locations icebird fetched, in order, as the table's metadata names
	// them (s3://…, file://…, before they were routed); empty from FromArrow.
	Fetched []string `json:"fetched,omitempty"`
}

// Column is one column's checksum: how many values are not null, and the sum modulo 2^64 of
// each such value's hash (see the package documentation), which no row order changes.
type Column struct {
	Name    string `json:"name"`
	Type    string `json:"type,omitempty"` // the Iceberg type ("long", "decimal(18, 2)"); Read only
	NonNull int64  `json:"non_null"`
	Sum     uint64 `json:"sum,string"`
}

// Read reads the table at the location st is opened at (its Describe().Location, which is
// the location its metadata names) with icebird, in a node process, and returns its row
// count, column checksums and (with opts.Values) its values.
//
// icebird fetches each file by URL. On a folder store (file://) the folder is served for
// the duration of the call by an HTTP server on 127.0.0.1; on a store that can presign
// (s3://, gs://, az://) each object below the location is fetched by a presigned URL, from
// the store's own endpoint. Any other fetch fails the read, so nothing else is asked. A
// failure of icebird's is an error carrying what node printed on stderr.
func Read(ctx context.Context, st *store.Store, opts Options) (*Result, error) {
	location := strings.TrimRight(st.Describe().Location, "/")
	if opts.Dir == "" {
		return nil, errors.New("icebird: Options.Dir (the folder holding node_modules/icebird) is empty")
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, "node_modules", "icebird", "package.json")); err != nil {
		return nil, fmt.Errorf("icebird: is it installed in %s? %w", opts.Dir, err)
	}
	routes, urls, stop, err := serve(ctx, st, location)
	if err != nil {
		return nil, err
	}
	defer stop()
	params, err := json.Marshal(map[string]any{
		"dir": opts.Dir, "table": location, "metadata": nonEmpty(opts.Metadata),
		"routes": routes, "urls": urls, "values": opts.Values,
	})
	if err != nil {
		return nil, err
	}
	node := opts.Node
	if node == "" {
		node = "node"
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, "--input-type=module", "--eval", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(params), &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("icebird: reading %s: %w: %s", location, err, strings.TrimSpace(stderr.String()))
	}
	var r Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("icebird: reading %s: node's output %q: %w", location, stdout.String(), err)
	}
	return &r, nil
}

func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// presignFor is how long a presigned URL of Read's lasts.
const presignFor = 15 * time.Minute

// serve makes the table's files fetchable over HTTP: routes maps a location prefix to an
// http base (a folder), urls a location to its presigned URL (a store that presigns); stop
// ends what serve started.
func serve(ctx context.Context, st *store.Store, location string) (routes [][2]string, urls map[string]string, stop func(), err error) {
	if dir, ok := st.LocalPath(""); ok {
		base, stop, err := serveFolder(dir)
		if err != nil {
			return nil, nil, nil, err
		}
		return [][2]string{{location + "/", base + "/"}}, nil, stop, nil
	}
	urls = map[string]string{}
	for o, err := range st.Walk(ctx, "") {
		if err != nil {
			return nil, nil, nil, err
		}
		u, err := st.PresignGet(ctx, o.Key, presignFor)
		if errors.Is(err, store.ErrUnsupported) {
			return nil, nil, nil, fmt.Errorf("icebird: %s is neither a folder nor on a store that presigns: %w", location, err)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		urls[location+"/"+o.Key] = u
	}
	return nil, urls, func() {}, nil
}

// serveFolder serves dir's files (ranged GETs included) on 127.0.0.1 until stop.
func serveFolder(dir string) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("icebird: serving %s: %w", dir, err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), func() {
		_ = srv.Close()
		<-done
	}, nil
}
