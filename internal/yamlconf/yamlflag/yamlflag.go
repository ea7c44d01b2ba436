// Package yamlflag makes a command's flags from the options of a config section, as its
// struct fields declare them (yamlconf.Options): one flag per key, and no table from flags to
// keys to keep in step.
//
// # Promises
//
//   - Add declares one flag for each key of the section that has a flag, with the field's
//     help, its default (from the defaults given, or its default:"…" tag) and its unit as the
//     value's type in --help (size, duration, int, string; a bool takes no value).
//   - A bool, int or duration flag is read as pflag reads one, and a bad one refused as the
//     command line is parsed.
//   - A flag holds its text until Apply decodes it into the section's value by the key's own
//     rules (yamlconf.Decoder.DecodeKey: units, minimums, ${env:…}), after the defaults, the
//     environment and the file: a flag given wins, a flag not given changes nothing.
//   - A flag's error names the flag ("--read-window: …").
package yamlflag

import (
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/internal/yamlconf"
)

// value is a flag made from an option: it keeps the text given, to be decoded by Apply.
type value struct {
	section reflect.Type // the section's struct type
	opt     yamlconf.Option
	text    string
	set     bool
}

func (v *value) String() string {
	if v.set || v.opt.Told {
		return v.text // a told default is computed elsewhere: this value has none
	}
	return v.opt.Default
}

// Set keeps s. A bool, an int or a duration is read as pflag reads one ("--skew 0",
// "--drain=1"), refusing a bad one at once, and kept as the config file writes it.
func (v *value) Set(s string) error {
	switch v.Type() {
	case "duration":
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		s = d.String()
	case "bool":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		s = strconv.FormatBool(b)
	case "int":
		n, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return err
		}
		s = strconv.FormatInt(n, 10)
	}
	v.text, v.set = s, true
	return nil
}

// Type is the value's name in --help.
func (v *value) Type() string {
	switch {
	case v.opt.Unit == "bytes":
		return "size"
	case v.opt.Type == reflect.TypeFor[time.Duration]():
		return "duration"
	}
	switch v.opt.Type.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "int"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "uint"
	case reflect.Float32, reflect.Float64:
		return "float"
	}
	return "string"
}

// IsBoolFlag lets pflag print a bool's default as a bool's.
func (v *value) IsBoolFlag() bool { return v.opt.Type.Kind() == reflect.Bool }

// Add declares on fl the flags of the section whose defaults are given (a struct or a
// pointer to one): those of the keys named, or of every key when none is.
func Add(fl *pflag.FlagSet, defaults any, keys ...string) {
	t := sectionType(defaults)
	for _, o := range yamlconf.Options(defaults) {
		if o.Flag == "" || len(keys) > 0 && !slices.Contains(keys, o.Key) {
			continue
		}
		v := &value{section: t, opt: o}
		usage := o.Help
		def := o.Default
		if o.Told {
			usage += " (default: " + def + ")"
			def = "" // shown in the usage, as written: not quoted by pflag
		}
		f := fl.VarPF(v, o.Flag, "", usage)
		f.DefValue = def
		if v.IsBoolFlag() {
			f.NoOptDefVal = "true"
			if f.DefValue == "" {
				f.DefValue = "false"
			}
		}
	}
}

// Apply decodes the flags given on fl that Add declared for v's section into v, a pointer to
// the section's struct, by dec's rules. It returns the first error, naming its flag.
func Apply(fl *pflag.FlagSet, v any, dec *yamlconf.Decoder) error {
	t := sectionType(v)
	var err error
	fl.Visit(func(f *pflag.Flag) {
		fv, ok := f.Value.(*value)
		if !ok || fv.section != t || !fv.set || err != nil {
			return
		}
		err = dec.DecodeKey(v, fv.opt.Key, fv.text, "--"+f.Name)
	})
	return err
}

// Flags returns the flags of fl that set keys of the section of v (a struct or a pointer to
// one), by flag name, with the key each sets.
func Flags(fl *pflag.FlagSet, v any) map[string]string {
	t := sectionType(v)
	out := map[string]string{}
	fl.VisitAll(func(f *pflag.Flag) {
		if fv, ok := f.Value.(*value); ok && fv.section == t {
			out[f.Name] = fv.opt.Key
		}
	})
	return out
}

func sectionType(v any) reflect.Type {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		panic("yamlflag: a section is a struct or a pointer to one")
	}
	return t
}
