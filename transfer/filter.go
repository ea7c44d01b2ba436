package transfer

import (
	"fmt"
	"regexp"
	"strings"
)

// A Filter chooses the files and objects of a tree that a recursive copy, a sync or a
// removal takes, by patterns on each one's name relative to the tree's root (the source
// directory or prefix), as aws-cli's --include and --exclude do: every name is taken, then
// each rule in the order given takes (Include) or leaves (Exclude) the names it matches, so
// the last rule that matches a name decides. The zero value takes every name.
//
// In a pattern, * matches any run of characters, '/' included (so "*.gz" is every .gz file
// at any depth), ? matches any one character, [abc] and [a-z] one character of a set ([!a-z]
// one not in it), and \ makes the next character plain.
type Filter struct {
	rules []filterRule
}

type filterRule struct {
	include bool
	pattern string
	re      *regexp.Regexp
}

// Include adds a rule that takes the names pattern matches.
func (f *Filter) Include(pattern string) error { return f.add(true, pattern) }

// Exclude adds a rule that leaves the names pattern matches.
func (f *Filter) Exclude(pattern string) error { return f.add(false, pattern) }

func (f *Filter) add(include bool, pattern string) error {
	re, err := globRegexp(pattern)
	if err != nil {
		return err
	}
	f.rules = append(f.rules, filterRule{include: include, pattern: pattern, re: re})
	return nil
}

// Takes reports whether the filter takes name (relative to the tree's root).
func (f *Filter) Takes(name string) bool {
	if f == nil {
		return true
	}
	take := true
	for _, r := range f.rules {
		if r.re.MatchString(name) {
			take = r.include
		}
	}
	return take
}

// IsZero reports whether the filter has no rule, and so takes every name.
func (f *Filter) IsZero() bool { return f == nil || len(f.rules) == 0 }

// HasWildcard reports whether key holds a wildcard (*, ? or [) that SplitWildcard splits at.
func HasWildcard(key string) bool { return strings.ContainsAny(key, "*?[") }

// SplitWildcard splits a key holding a wildcard, as `s3://b/logs/2024-*/*.gz` holds, into the
// prefix that is listed (up to the last '/' before the first wildcard: "logs/") and the
// pattern the names below it must match ("2024-*/*.gz"), as s5cmd reads such a key. ok is
// false when key holds no wildcard.
func SplitWildcard(key string) (base, pattern string, ok bool) {
	i := strings.IndexAny(key, "*?[")
	if i < 0 {
		return key, "", false
	}
	cut := strings.LastIndexByte(key[:i], '/') + 1
	return key[:cut], key[cut:], true
}

// PatternFilter is the filter that takes only the names pattern matches: what a source key's
// wildcard chooses below the prefix it is split from (SplitWildcard).
func PatternFilter(pattern string) (*Filter, error) {
	f := &Filter{}
	if err := f.Exclude("*"); err != nil {
		return nil, err
	}
	if err := f.Include(pattern); err != nil {
		return nil, err
	}
	return f, nil
}

// globRegexp is the regular expression matching what the glob pattern matches, whole.
func globRegexp(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`\A`)
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 == len(pattern) {
				return nil, fmt.Errorf("pattern %q ends in a lone \\", pattern)
			}
			i++
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		case '[':
			end := strings.IndexByte(pattern[i+1:], ']')
			if end < 0 {
				return nil, fmt.Errorf("pattern %q: a [ without its ]", pattern)
			}
			set := pattern[i+1 : i+1+end]
			if set == "" || set == "!" {
				return nil, fmt.Errorf("pattern %q: an empty set []", pattern)
			}
			b.WriteByte('[')
			if set[0] == '!' {
				b.WriteByte('^')
				set = set[1:]
			}
			for _, r := range set {
				if r == '-' {
					b.WriteByte('-')
				} else {
					b.WriteString(regexp.QuoteMeta(string(r)))
				}
			}
			b.WriteByte(']')
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	return re, nil
}
