// Package bytesize reads and prints byte sizes as wharf's configuration writes them: a whole
// number of bytes, or a number with a binary unit ("8MiB", "32 MiB", "1048576").
package bytesize

import (
	"fmt"
	"strings"
)

// Format prints n bytes as the largest whole binary unit: 8MiB, 5GiB, 1234B.
func Format(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// Parse reads a size: a whole number of bytes, or one with a unit B, KiB, MiB, GiB (also KB,
// MB, GB as binary units, and K, M, G), with or without a space: "8MiB", "32 MiB", "1048576".
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: want a number with an optional unit (8MiB)", s)
	}
	var n int64
	if _, err := fmt.Sscan(t[:i], &n); err != nil {
		return 0, fmt.Errorf("size %q: %v", s, err)
	}
	mult := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}
	m, ok := mult[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit (want B, KiB, MiB or GiB)", s)
	}
	if n > (1<<62)/m {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n * m, nil
}
