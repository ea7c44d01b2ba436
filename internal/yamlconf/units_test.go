package yamlconf

import (
	"reflect"
	"testing"
	"time"
)

type unitOptions struct {
	Wait      time.Duration  `yaml:"wait"`
	Delay     *time.Duration `yaml:"delay"`
	PartSize  int64          `yaml:"part_size" unit:"bytes"`
	Window    int64          `yaml:"window" unit:"bytes" min:"1024"`
	Sizes     []int64        `yaml:"sizes" unit:"bytes"`
	Count     int64          `yaml:"count"`
	ChunkRows int            `yaml:"chunk_rows" min:"1"`
	Workers   int            `yaml:"workers" min:"0"`
}

func defaultUnits() unitOptions {
	return unitOptions{Wait: time.Minute, PartSize: 5 << 20, Window: 64 << 10, ChunkRows: 1000, Workers: 4}
}

// Durations are Go durations ("1m30s"); a bare number has no unit and is refused, naming the
// key and its line.
func TestDurations(t *testing.T) {
	o := defaultUnits()
	if err := decodeDoc(t, "wait: 1m30s\ndelay: 250ms\n", &o); err != nil {
		t.Fatal(err)
	}
	if o.Wait != 90*time.Second || o.Delay == nil || *o.Delay != 250*time.Millisecond {
		t.Errorf("wait %v, delay %v", o.Wait, o.Delay)
	}
	for doc, want := range map[string]string{
		"count: 1\nwait: 30\n":    "wharf.yaml:2: wait: cannot unmarshal !!int `30` into time.Duration",
		"wait: soon\n":            "wharf.yaml:1: wait: cannot unmarshal !!str `soon` into time.Duration",
		"count: 1\n\ndelay: 5x\n": "wharf.yaml:3: delay: cannot unmarshal !!str `5x` into time.Duration",
	} {
		o := defaultUnits()
		if err := decodeDoc(t, doc, &o); err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", doc, err, want)
		}
	}
}

// A field tagged unit:"bytes" reads a number of bytes or a binary unit, with or without a
// space, from the file, from interpolation and in a list; an untagged integer does not.
func TestByteSizes(t *testing.T) {
	d := &Decoder{File: "wharf.yaml", Getenv: envOf(map[string]string{"PART": "16MiB"})}
	for doc, want := range map[string]int64{
		"part_size: 8MiB":        8 << 20,
		"part_size: 32 MiB":      32 << 20,
		"part_size: 1048576":     1 << 20,
		`part_size: "2 GiB"`:     2 << 30,
		"part_size: 64k":         64 << 10,
		"part_size: ${env:PART}": 16 << 20,
		"part_size: 0":           0,
		"chunk_rows: 2":          5 << 20, // left out: the default
	} {
		o := defaultUnits()
		if err := decodeWith(t, d, doc, &o); err != nil || o.PartSize != want {
			t.Errorf("%s: %d, %v; want %d", doc, o.PartSize, err, want)
		}
	}
	o := defaultUnits()
	if err := decodeDoc(t, "sizes: [1KiB, 2 MiB, 3]", &o); err != nil || !reflect.DeepEqual(o.Sizes, []int64{1 << 10, 2 << 20, 3}) {
		t.Errorf("a list of sizes: %v, %v", o.Sizes, err)
	}
	for doc, want := range map[string]string{
		"count: 1\npart_size: 8 XB":    `wharf.yaml:2: part_size: size "8 XB": unknown unit (want B, KiB, MiB or GiB)`,
		"part_size: -1":                `wharf.yaml:1: part_size: size "-1": want a number with an optional unit (8MiB)`,
		"part_size: MiB":               `wharf.yaml:1: part_size: size "MiB": want a number with an optional unit (8MiB)`,
		"sizes:\n  - 1\n  - 2 parsecs": `wharf.yaml:3: sizes[1]: size "2 parsecs": unknown unit (want B, KiB, MiB or GiB)`,
		"count: 8MiB":                  "wharf.yaml:1: count: cannot unmarshal !!str `8MiB` into int64",
	} {
		o := defaultUnits()
		if err := decodeDoc(t, doc, &o); err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", doc, err, want)
		}
	}
}

// A number tagged min:"N" refuses a value below N, from the file, from interpolation and from
// a flag, naming it; left out or null, the default stays; N itself is accepted.
func TestMinimums(t *testing.T) {
	d := &Decoder{File: "wharf.yaml", Getenv: envOf(map[string]string{"ROWS": "0", "BIG": "5000"})}
	for _, tc := range []struct {
		doc  string
		want unitOptions
	}{
		{"wait: 1m", defaultUnits()},
		{"chunk_rows: ~", defaultUnits()},
		{"chunk_rows: 1\nworkers: 0", unitOptions{Wait: time.Minute, PartSize: 5 << 20, Window: 64 << 10, ChunkRows: 1}},
		{"chunk_rows: ${env:BIG}\nwindow: 1KiB", unitOptions{Wait: time.Minute, PartSize: 5 << 20, Window: 1024, ChunkRows: 5000, Workers: 4}},
	} {
		o := defaultUnits()
		if err := decodeWith(t, d, tc.doc, &o); err != nil || !reflect.DeepEqual(o, tc.want) {
			t.Errorf("%q: %+v, %v\nwant %+v", tc.doc, o, err, tc.want)
		}
	}
	for doc, want := range map[string]string{
		"count: 1\nchunk_rows: 0":   "wharf.yaml:2: chunk_rows: 0: want at least 1 (leave it out for the default)",
		"chunk_rows: -5":            "wharf.yaml:1: chunk_rows: -5: want at least 1 (leave it out for the default)",
		"chunk_rows: ${env:ROWS}":   "wharf.yaml:1: chunk_rows: 0: want at least 1 (leave it out for the default)",
		"workers: -1":               "wharf.yaml:1: workers: -1: want at least 0 (leave it out for the default)",
		"window: 1023":              "wharf.yaml:1: window: 1023: want at least 1024 (leave it out for the default)",
		"count: 1\n\nwindow: 512 B": "wharf.yaml:3: window: 512: want at least 1024 (leave it out for the default)",
	} {
		o := defaultUnits()
		if err := decodeWith(t, d, doc, &o); err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", doc, err, want)
		}
	}
	o := defaultUnits()
	err := d.DecodeKey(&o, "chunk_rows", "0", "--chunk-rows")
	if want := "--chunk-rows: 0: want at least 1 (leave it out for the default)"; err == nil || err.Error() != want {
		t.Errorf("a flag below the minimum: %v", err)
	}
}

type nested struct {
	Retry   retry            `yaml:"retry"`
	Backup  *retry           `yaml:"backup"`
	Entries map[string]retry `yaml:"entries"`
	List    []retry          `yaml:"list"`
	Name    string           `yaml:"name"`
}

// Decoding over defaults changes only what the document gives, at every depth: a section's
// other keys, a pointer section's, a map's other entries and an entry's other keys stay; a
// list given is the list (its items are not merged); a later decode (a flag) wins.
func TestDefaultsKeptWhereNotGiven(t *testing.T) {
	v := nested{
		Retry:   retry{Attempts: 3, Mode: "fast"},
		Backup:  &retry{Attempts: 7, Mode: "slow"},
		Entries: map[string]retry{"one": {Attempts: 1, Mode: "a"}, "two": {Attempts: 2}},
		List:    []retry{{Attempts: 9}, {Attempts: 8}},
		Name:    "default",
	}
	doc := `retry: {mode: safe}
backup: {attempts: 8}
entries:
  one: {mode: b}
  three: {attempts: 3}
list:
  - {mode: only}
name: null
`
	if err := decodeDoc(t, doc, &v); err != nil {
		t.Fatal(err)
	}
	if err := (&Decoder{}).DecodeKey(&v, "retry.attempts", "5", "--retry-attempts"); err != nil {
		t.Fatal(err)
	}
	want := nested{
		Retry:   retry{Attempts: 5, Mode: "safe"},
		Backup:  &retry{Attempts: 8, Mode: "slow"},
		Entries: map[string]retry{"one": {Attempts: 1, Mode: "b"}, "two": {Attempts: 2}, "three": {Attempts: 3}},
		List:    []retry{{Mode: "only"}},
		Name:    "default",
	}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got  %+v %+v\nwant %+v %+v", v, *v.Backup, want, *want.Backup)
	}
}
