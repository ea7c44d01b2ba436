package crc32c

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestCombineIsTheChecksumOfTheWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1000, 1 << 16, 5<<20 + 3} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		for _, cut := range []int{0, n / 3, n / 2, n} {
			got := Combine(Sum(b[:cut]), Sum(b[cut:]), int64(n-cut))
			if want := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)); got != want {
				t.Fatalf("n=%d cut=%d: Combine %08x, whole %08x", n, cut, got, want)
			}
		}
	}
}

func TestPiecesInAnyOrder(t *testing.T) {
	b := bytes.Repeat([]byte("wharf checksums "), 10000)
	var p Pieces
	sizes := []int{1000, 50000, 1, 0, 33000}
	var offs []int
	off := 0
	for _, s := range sizes {
		offs = append(offs, off)
		off += s
	}
	for _, i := range []int{3, 1, 4, 0, 2} {
		p.Set(i, Sum(b[offs[i]:offs[i]+sizes[i]]), int64(sizes[i]))
	}
	if got, ok := p.Sum(len(sizes)); !ok || got != Sum(b[:off]) {
		t.Fatalf("Pieces.Sum = %08x, %v; want %08x", got, ok, Sum(b[:off]))
	}
	var q Pieces
	q.Set(1, 0, 10)
	if _, ok := q.Sum(2); ok {
		t.Fatal("Sum with piece 0 never set reported a checksum")
	}
}

func TestFormatParse(t *testing.T) {
	// The value S3 gives for "hello world" (x-amz-checksum-crc32c, MinIO and SeaweedFS alike).
	if got := Format(Sum([]byte("hello world"))); got != "yZRlqg==" {
		t.Fatalf("Format = %q, want yZRlqg==", got)
	}
	c, err := Parse("yZRlqg==")
	if err != nil || c != Sum([]byte("hello world")) {
		t.Fatalf("Parse = %08x, %v", c, err)
	}
	for _, bad := range []string{"", "!!", "AAAAAAA="} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func BenchmarkCombine(b *testing.B) {
	for b.Loop() {
		Combine(0x12345678, 0x9abcdef0, 16<<20)
	}
}
