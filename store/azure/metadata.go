package azure

import (
	"strings"

	"github.com/wharfdata/wharf/store/driver"
)

// Azure metadata names must be C# identifiers (letters, digits and '_', not starting with a
// digit), are compared without regard to case, and come back from the Go SDK capitalised
// ("Wharf_sha256"). The contract's keys are lowercase letters, digits and dashes, starting with
// a letter. The two are mapped reversibly:
//
//   - a contract key ([a-z][a-z0-9-]*) is written with each '-' as '_': wharf-sha256 ↔
//     wharf_sha256. Since '_' never occurs in such a key, this is a one-to-one substitution,
//     "--" and a trailing '-' included.
//   - any other key (one holding '_', an upper-case letter, or not starting with a letter) is
//     written in an escaped form: a leading '_' (which no plain name has), then each letter or
//     digit as itself and every other byte as '_' and two lowercase hex digits: my_key ↔
//     _my_5fkey. So keys with underscores round-trip too.
//
// Names are lowercased on the way back. A name that wharf did not write is read with each '_'
// as '-' (so my_key reads as my-key and is written back as my_key), unless it has the escaped
// form, which only wharf writes.

// metaName returns the Azure metadata name for the contract key k.
func metaName(k string) string {
	if driver.MetadataKeyOK(k) {
		return strings.ReplaceAll(k, "-", "_")
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.WriteByte('_')
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

// metaKey returns the contract key for the Azure metadata name n, as the SDK hands it back.
func metaKey(n string) string {
	n = strings.ToLower(n)
	if k, ok := unescapeName(n); ok {
		return k
	}
	return strings.ReplaceAll(n, "_", "-")
}

// unescapeName decodes the escaped form of metaName. It accepts only what metaName writes for a
// key that is not plain, so every key has exactly one name.
func unescapeName(n string) (string, bool) {
	if len(n) < 2 || n[0] != '_' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(n); i++ {
		c := n[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == '_' && i+2 < len(n) && isHex(n[i+1]) && isHex(n[i+2]):
			v := unhex(n[i+1])<<4 | unhex(n[i+2])
			if v >= 'a' && v <= 'z' || v >= '0' && v <= '9' {
				return "", false // metaName never escapes these
			}
			b.WriteByte(v)
			i += 2
		default:
			return "", false
		}
	}
	k := b.String()
	if driver.MetadataKeyOK(k) {
		return "", false // metaName writes this key plain
	}
	return k, true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// encodeMetadata returns md with names encoded for Azure, in the SDK's form.
func encodeMetadata(md map[string]string) map[string]*string {
	if len(md) == 0 {
		return nil
	}
	out := make(map[string]*string, len(md))
	for k, v := range md {
		out[metaName(k)] = &v
	}
	return out
}

// decodeMetadata returns the SDK's metadata with contract keys, or nil when there is none.
func decodeMetadata(md map[string]*string) map[string]string {
	if len(md) == 0 {
		return nil
	}
	out := make(map[string]string, len(md))
	for n, v := range md {
		if v != nil {
			out[metaKey(n)] = *v
		}
	}
	return out
}
