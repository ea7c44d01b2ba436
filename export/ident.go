package export

import (
	"errors"
	"fmt"
	"strings"
)

// tableName splits Export.Table into its identifiers: "name", "schema.name", or either part
// double-quoted as SQL quotes identifiers ("Other Schema"."weird.name", with "" for a quote
// inside), so that a name holding a dot can be given. An unquoted part is taken as written:
// it is quoted in the SQL wharf sends, so its case is kept.
func tableName(s string) ([]string, error) {
	var parts []string
	for rest := s; ; {
		var part string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			var b strings.Builder
			for {
				i := strings.IndexByte(rest[end:], '"')
				if i < 0 {
					return nil, fmt.Errorf("table %s: a quoted identifier is not closed", s)
				}
				b.WriteString(rest[end : end+i])
				end += i + 1
				if !strings.HasPrefix(rest[end:], `"`) {
					break
				}
				b.WriteByte('"') // "" is a quote inside
				end++
			}
			part, rest = b.String(), rest[end:]
			if rest != "" && rest[0] != '.' {
				return nil, fmt.Errorf("table %s: want a dot after a quoted identifier", s)
			}
		} else {
			i := strings.IndexByte(rest, '.')
			if i < 0 {
				i = len(rest)
			}
			part, rest = rest[:i], rest[i:]
			if strings.Contains(part, `"`) {
				return nil, fmt.Errorf(`table %s: quote a whole identifier ("a.b"), not part of one`, s)
			}
		}
		if part == "" {
			return nil, fmt.Errorf("table %s: an empty identifier", s)
		}
		parts = append(parts, part)
		if rest == "" {
			break
		}
		rest = rest[1:] // the dot
		if rest == "" {
			return nil, errors.New("table " + s + ": ends with a dot")
		}
	}
	if len(parts) > 2 {
		return nil, fmt.Errorf(`table %s: want a table or schema.table (quote a name that holds a dot: "a.b")`, s)
	}
	return parts, nil
}
