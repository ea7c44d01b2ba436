package driver

import (
	"fmt"
	"runtime"
	"strings"
	"unicode/utf8"
)

// ValidateKey checks a key before any backend sees it. A key is refused (ErrKeyInvalid) when it
// is empty, starts with '/', has an empty segment ("a//b") but its last, a "." or ".."
// segment, a NUL or a control character other than a tab, or is not valid UTF-8. A key that
// passes can never name anything outside a store's root. A tab is a key byte like any other.
//
// A key may end in one '/' ("logs/2024/"): such objects are what consoles and other tools
// make as directory markers, and what a copy between stores keeps. A backend that keeps
// objects as files (the file store) refuses them itself, since no file name ends in '/'.
//
// A backslash is read (op "get", "head", "list": an object another tool wrote, such as
// aws-cli on S3, can be read and downloaded) but never written or deleted: Azure and
// SeaweedFS take it for '/', so a put or a delete of "a\b" there would act on "a/b". On
// Windows, where it separates path names, it is refused for every op.
func ValidateKey(op, key string) error {
	reason := keyProblem(key)
	if reason == "" && strings.ContainsRune(key, '\\') && (runtime.GOOS == "windows" || !readOp(op)) {
		reason = "key contains a backslash, which some stores (Azure, SeaweedFS) take for '/': wharf reads such a key but never writes or deletes it"
	}
	if reason != "" {
		return &Error{Op: op, Key: key, Kind: ErrKeyInvalid, Err: fmt.Errorf("%s", reason)}
	}
	return nil
}

func readOp(op string) bool { return op == "get" || op == "head" || op == "list" }

// ValidatePrefix checks a listing prefix: empty is allowed, and so is a trailing '/'.
func ValidatePrefix(op, prefix string) error {
	if prefix == "" {
		return nil
	}
	return ValidateKey(op, strings.TrimSuffix(prefix, "/"))
}

func keyProblem(key string) string {
	switch {
	case key == "":
		return "empty key"
	case len(key) > 1024:
		return "key longer than 1024 bytes"
	case !utf8.ValidString(key):
		return "key is not valid UTF-8"
	case strings.HasPrefix(key, "/"):
		return "key starts with '/'"
	}
	for _, r := range key {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return "key contains a control character"
		}
	}
	for seg := range strings.SplitSeq(strings.TrimSuffix(key, "/"), "/") {
		switch seg {
		case "":
			return "key has an empty segment"
		case ".", "..":
			return fmt.Sprintf("key has a %q segment", seg)
		}
	}
	return ""
}

// ValidateMetadata checks user metadata keys: lowercase ASCII letters, digits and dashes,
// starting with a letter.
func ValidateMetadata(op, key string, md map[string]string) error {
	for k, v := range md {
		if !MetadataKeyOK(k) {
			return &Error{Op: op, Key: key, Kind: ErrKeyInvalid,
				Err: fmt.Errorf("metadata key %q: use lowercase letters, digits and dashes, starting with a letter", k)}
		}
		for _, r := range v {
			if r < 0x20 || r > 0x7e {
				return &Error{Op: op, Key: key, Kind: ErrKeyInvalid,
					Err: fmt.Errorf("metadata %q: value must be printable ASCII", k)}
			}
		}
	}
	return nil
}

// MetadataKeyOK reports whether k has the form of a metadata key: lowercase letters, digits
// and dashes, starting with a letter.
func MetadataKeyOK(k string) bool {
	if k == "" || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
