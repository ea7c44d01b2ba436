// Package yamlconf decodes wharf's configuration file strictly: one walker for every section,
// so every package's options are read by the same rules.
//
// # Promises
//
//   - A key that the target struct does not have (by its yaml tag) is an error naming the key,
//     where it is ("exports[0].store") and its line, and listing the keys that are known. A
//     key given twice, in a section or in a map (two stores of one name), is an error at the
//     second. A value given by an alias (*name) is reported at the line of the alias.
//   - ${env:NAME} and ${file:PATH} in a scalar are replaced before it is decoded (an unset
//     variable or an unreadable file is an error naming it), except in fields tagged
//     `secret:"ref"`: those hold credential references (env://NAME, file:///path) that are
//     resolved only when used, and ${…} in them is refused so that a secret never enters the
//     configuration as a literal. A value read by ${…} is not interpolated again. No error
//     quotes the value of a credential field.
//   - A field tagged `unit:"bytes"` (an integer) reads a byte size as a number or with a
//     binary unit ("8MiB", "32 MiB").
//   - A number field tagged `min:"N"` (a byte size too) refuses a value below N, naming it: a
//     key left out keeps its default, while `chunk_rows: 0` is an error rather than a silent
//     default.
//   - A string field tagged `null:"word"` has "null" among its values: an unquoted null
//     (null, Null, NULL) is that word, not a value left out, and ~ or no value at all there is
//     an error naming the key (`infinity: null` writes NULL; `infinity: ~` is refused).
//   - A field of type Raw keeps its subtree as written, with the decoder that read it, to be
//     decoded later against a type chosen by other keys (a store's options, once its URL's
//     scheme is known), by the same rules and with the same line numbers.
//   - Options lists a section's keys as its fields declare them, once: the key, its flag
//     (flag:"name", else the key with '-' for '_' and '.'; flag:"-" for none), its help
//     (help:"…"), its unit and its default (default:"…", else the value given), so that a
//     command's flags are made from the section (package yamlflag) rather than listed again.
//     A subtree, list or map is no flag's and must say so (flag:"-").
//   - Decoding over a value that already holds defaults changes only the fields the document
//     gives: the caller decides the order (defaults, then the environment, then the file,
//     then the flags) by the order of its calls.
package yamlconf
