package load

import (
	"regexp"
)

// Types is the type table: the PostgreSQL type of a column of each Arrow type a manifest
// names (as export writes them). A decimal(p, s) is numeric(p, s). Every other type is
// refused by name.
var Types = map[string]string{
	"bool":                  "boolean",
	"int16":                 "smallint",
	"int32":                 "integer",
	"int64":                 "bigint",
	"float32":               "real",
	"float64":               "double precision",
	"utf8":                  "text",
	"binary":                "bytea",
	"date32":                "date",
	"timestamp[us]":         "timestamp without time zone",
	"timestamp[us, tz=UTC]": "timestamp with time zone",
	"extension<arrow.uuid>": "uuid",
	jsonType:                "jsonb",
}

// jsonType is the manifest's name of a JSON column's type.
const jsonType = "extension<arrow.json[storage_type=utf8]>"

var decimalPattern = regexp.MustCompile(`^decimal\((\d+), (\d+)\)$`)

// pgTypeOf is the PostgreSQL type of a column of Arrow type t (as the manifest names it), as
// format_type() writes it.
func pgTypeOf(t string) (string, bool) {
	if m := decimalPattern.FindStringSubmatch(t); m != nil {
		return "numeric(" + m[1] + "," + m[2] + ")", true
	}
	pg, ok := Types[t]
	return pg, ok
}
