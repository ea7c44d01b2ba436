// Command binsize prints what weighs what in a Go binary: the bytes of the file each module's
// symbols take, from the symbol table of an unstripped build (build it without -s -w; the
// figures are those of the stripped binary, which keeps the same sections but the symbol
// table and DWARF).
//
//	CGO_ENABLED=0 go build -trimpath -tags grpcnotrace,disable_grpc_modules -o /tmp/wharf-full ./cmd/wharf
//	go run ./bench/binsize /tmp/wharf-full            # by module
//	go run ./bench/binsize -pkg /tmp/wharf-full       # by package
//
// Only symbols in sections that occupy the file count: .bss and .noptrbss (zeroed at start,
// however large) take no bytes of it. The function table (.gopclntab, about as large as the
// code) has no per-symbol sizes: its share of each module is estimated in proportion to the
// module's code and added to the module's code and data in the "est. total" column.
package main

import (
	"cmp"
	"debug/buildinfo"
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

func main() {
	byPkg := flag.Bool("pkg", false, "group by package instead of by module")
	top := flag.Int("n", 40, "rows to print")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: binsize [-pkg] [-n rows] BINARY")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *byPkg, *top); err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
}

// weight is what one module or package takes of the file.
type weight struct {
	name       string
	code, data int64 // .text; everything else that is in the file (.rodata, .data, …)
}

func run(path string, byPkg bool, top int) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("%s: %w (build it without -ldflags=-s)", path, err)
	}
	modules, err := modulePaths(path)
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	w := map[string]*weight{}
	var code int64
	for _, s := range syms {
		if int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Type == elf.SHT_NOBITS || sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		name := owner(pkgOf(s.Name), modules, byPkg)
		if w[name] == nil {
			w[name] = &weight{name: name}
		}
		if sec.Name == ".text" {
			w[name].code += int64(s.Size)
			code += int64(s.Size)
		} else {
			w[name].data += int64(s.Size)
		}
	}
	var pcln int64
	if s := f.Section(".gopclntab"); s != nil {
		pcln = int64(s.Size)
	}
	rows := make([]*weight, 0, len(w))
	for _, r := range w {
		rows = append(rows, r)
	}
	est := func(r *weight) int64 { return r.code + r.data + r.code*pcln/max(code, 1) }
	slices.SortFunc(rows, func(a, b *weight) int { return cmp.Compare(est(b), est(a)) })
	fmt.Printf("%s: %.1f MiB on disk; code %.1f MiB, function table %.1f MiB\n\n", path, mib(st.Size()), mib(code), mib(pcln))
	fmt.Printf("%-64s %8s %8s %10s\n", "module", "code", "data", "est. total")
	for i, r := range rows {
		if i == top {
			break
		}
		fmt.Printf("%-64s %8.2f %8.2f %10.2f\n", r.name, mib(r.code), mib(r.data), mib(est(r)))
	}
	return nil
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// modulePaths is the main module and every dependency the binary was built with.
func modulePaths(path string) ([]string, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, err
	}
	paths := []string{bi.Main.Path}
	for _, d := range bi.Deps {
		paths = append(paths, d.Path)
	}
	// Longest first, so that a module inside another's path wins.
	slices.SortFunc(paths, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return paths, nil
}

// owner is the module a package belongs to ("std" for the standard library and the runtime),
// or the package itself when byPkg.
func owner(pkg string, modules []string, byPkg bool) string {
	if byPkg {
		return pkg
	}
	for _, m := range modules {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return m
		}
	}
	if strings.Contains(strings.SplitN(pkg, "/", 2)[0], ".") {
		return pkg // vendored into another module's path, or not in the build info
	}
	return "std"
}

// pkgOf is the import path of a symbol's package: "github.com/a/b.(*T).M" is "github.com/a/b",
// "type:*github.com/a/b.T" is too; symbols of the linker ("go:func.*", "runtime.…") are std.
func pkgOf(sym string) string {
	sym = strings.ReplaceAll(sym, "%2e", ".")
	for _, p := range []string{"type:", "go:itab.", "go:link.", "go:info.", "*"} {
		sym = strings.TrimPrefix(sym, p)
	}
	sym = strings.TrimPrefix(sym, "*")
	sym = strings.TrimPrefix(sym, ".eq.") // generated equality of a type
	sym, _, _ = strings.Cut(sym, "[")     // a generic instance belongs to its function's package
	sym, _, _ = strings.Cut(sym, ",")     // an itab (type,interface) belongs to the type's package
	if strings.HasPrefix(sym, "go:") || !strings.Contains(sym, ".") {
		return "runtime"
	}
	slash := strings.LastIndex(sym, "/")
	if dot := strings.Index(sym[slash+1:], "."); dot >= 0 {
		return sym[:slash+1+dot]
	}
	return sym
}
