package export

import "strings"

// queryBody returns q without what may follow its last token and cannot go inside a
// subquery: whitespace, the statement's closing semicolons, and comments after them (`-- …`
// to the end of a line, `/* … */`), as in "SELECT … ; -- nightly". It reads q as SQL does:
// quotes ('…', "…", PostgreSQL's $tag$…$tag$) and comments are skipped whole, so a -- or a ;
// inside a string or an identifier stays. A semicolon between two statements stays too
// (the database then refuses the query, naming it).
func queryBody(q string) string {
	end := 0 // the end of the last byte that is not a comment, a space or a semicolon
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			n := strings.IndexByte(q[i:], '\n')
			if n < 0 {
				return q[:end]
			}
			i += n + 1
			continue
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			i += 2 + closing(q[i+2:], "*/")
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == ';':
			i++
			continue
		case c == '\'' || c == '"':
			i += 1 + closing(q[i+1:], string(c))
		case c == '$':
			if tag, ok := dollarTag(q[i:]); ok && (i == 0 || !identByte(q[i-1])) {
				i += len(tag) + closing(q[i+len(tag):], tag)
			} else {
				i++
			}
		default:
			i++
		}
		end = i
	}
	return q[:end]
}

// closing returns how far into s the quote or comment ends: past the first end (a doubled
// quote inside ends nothing: it is read as two), or len(s) when it never ends.
func closing(s, end string) int {
	n := strings.Index(s, end)
	if n < 0 {
		return len(s)
	}
	return n + len(end)
}

// dollarTag returns the $tag$ (or $$) that s begins with.
func dollarTag(s string) (string, bool) {
	for j := 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '$':
			return s[:j+1], true
		case identByte(c) && !(j == 1 && c >= '0' && c <= '9'):
		default:
			return "", false
		}
	}
	return "", false
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
