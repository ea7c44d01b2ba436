package bytesize

import "testing"

func TestSizes(t *testing.T) {
	for in, want := range map[string]int64{"8MiB": 8 << 20, "32 MiB": 32 << 20, "1048576": 1 << 20, "5gib": 5 << 30,
		"64KiB": 64 << 10, "7B": 7, "2M": 2 << 20, "1GB": 1 << 30} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "8 XB", "-1", "99999999999GiB"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
	for n, want := range map[int64]string{8 << 20: "8MiB", 5 << 30: "5GiB", 1234: "1234B", 0: "0B", 3 << 10: "3KiB"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}
