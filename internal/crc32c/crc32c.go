package crc32c

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
)

var table = crc32.MakeTable(crc32.Castagnoli)

// New returns a hash computing the CRC-32C of what is written to it.
func New() hash.Hash32 { return crc32.New(table) }

// Sum returns the CRC-32C of b.
func Sum(b []byte) uint32 { return crc32.Checksum(b, table) }

// Update returns the CRC-32C of the bytes whose checksum is crc followed by b.
func Update(crc uint32, b []byte) uint32 { return crc32.Update(crc, table, b) }

// Format returns crc as the stores write it: the base64 of its big-endian bytes.
func Format(crc uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], crc)
	return base64.StdEncoding.EncodeToString(b[:])
}

// Parse reads a checksum written as Format writes it.
func Parse(s string) (uint32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 4 {
		return 0, fmt.Errorf("crc32c: %q is not the base64 of four bytes", s)
	}
	return binary.BigEndian.Uint32(b), nil
}

// Combine returns the CRC-32C of a‖b from crcA (of a), crcB (of b) and the length of b. It
// shifts crcA past lenB zero bytes by squaring the matrix of one zero bit's effect on the
// register, as zlib's crc32_combine does: O(log lenB) 32×32 matrix products.
func Combine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	var even, odd [32]uint32
	odd[0] = crc32.Castagnoli // the operator of one zero bit
	row := uint32(1)
	for i := 1; i < 32; i++ {
		odd[i] = row
		row <<= 1
	}
	square(&even, &odd) // two zero bits
	square(&odd, &even) // four
	for {
		square(&even, &odd) // the next power of two, applied where lenB has a one bit
		if lenB&1 != 0 {
			crcA = times(&even, crcA)
		}
		lenB >>= 1
		if lenB == 0 {
			break
		}
		square(&odd, &even)
		if lenB&1 != 0 {
			crcA = times(&odd, crcA)
		}
		lenB >>= 1
		if lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

// times multiplies the vector v by the matrix m over GF(2).
func times(m *[32]uint32, v uint32) uint32 {
	var sum uint32
	for i := 0; v != 0; i, v = i+1, v>>1 {
		if v&1 != 0 {
			sum ^= m[i]
		}
	}
	return sum
}

// square sets sq to m·m.
func square(sq, m *[32]uint32) {
	for i := range 32 {
		sq[i] = times(m, m[i])
	}
}

// Pieces collects the checksums of consecutive pieces of one whole, given in any order (the
// parts of an upload sent at once), and combines them in order.
type Pieces struct {
	crc  []uint32
	size []int64
	set  []bool
}

// Set records the checksum and length of piece i (from 0).
func (p *Pieces) Set(i int, crc uint32, size int64) {
	for len(p.crc) <= i {
		p.crc, p.size, p.set = append(p.crc, 0), append(p.size, 0), append(p.set, false)
	}
	p.crc[i], p.size[i], p.set[i] = crc, size, true
}

// Sum returns the checksum of the first n pieces in order, and false when one of them was
// never set.
func (p *Pieces) Sum(n int) (uint32, bool) {
	if n > len(p.crc) {
		return 0, false
	}
	var crc uint32
	for i := range n {
		if !p.set[i] {
			return 0, false
		}
		crc = Combine(crc, p.crc[i], p.size[i])
	}
	return crc, true
}
