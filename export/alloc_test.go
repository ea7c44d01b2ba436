package export

import (
	"bytes"
	"testing"
	"unsafe"
)

func TestRecyclerReusesZeroedAligned(t *testing.T) {
	r := newRecycler(1 << 20)
	aligned := func(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%alignment == 0 }
	a := r.Allocate(5000)
	if len(a) != 5000 || cap(a) != 8192 || !aligned(a) {
		t.Fatalf("Allocate(5000): len %d cap %d aligned %v", len(a), cap(a), aligned(a))
	}
	for i := range a {
		a[i] = 0xff
	}
	r.Free(a)
	b := r.Allocate(6000)
	if unsafe.SliceData(b) != unsafe.SliceData(a) {
		t.Fatal("a freed buffer of the same size class was not reused")
	}
	if len(b) != 6000 || !bytes.Equal(b[:cap(b)], make([]byte, cap(b))) {
		t.Fatal("a reused buffer was not zeroed to its capacity")
	}
	// Reallocate keeps the contents when it moves to a larger class.
	copy(b, "hello")
	c := r.Reallocate(20000, b)
	if len(c) != 20000 || string(c[:5]) != "hello" || !aligned(c) {
		t.Fatalf("Reallocate: len %d %q", len(c), c[:5])
	}
	// Small buffers are not kept; neither are buffers past the bound.
	s := r.Allocate(100)
	if !aligned(s) || len(s) != 100 {
		t.Fatalf("Allocate(100): len %d aligned %v", len(s), aligned(s))
	}
	r.Free(s)
	if r.held != 8192 { // only b's buffer, freed by Reallocate
		t.Fatalf("held %d, want 8192", r.held)
	}
	r.Free(r.Allocate(1 << 20)) // would pass the 1 MiB bound
	if r.held != 8192 {
		t.Fatalf("held %d after freeing past the bound, want 8192", r.held)
	}
	if z := r.Allocate(0); len(z) != 0 {
		t.Fatalf("Allocate(0) = %d bytes", len(z))
	}
}
