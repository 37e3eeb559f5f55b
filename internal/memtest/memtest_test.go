package memtest

import "testing"

var sink [][]byte

// TestPeakHeap: what f holds while it runs is seen, and a small f is
// seen small.
func TestPeakHeap(t *testing.T) {
	small := PeakHeap(func() {})
	big := PeakHeap(func() {
		for range 64 {
			sink = append(sink, make([]byte, 1<<20))
		}
	})
	sink = nil
	if big < small+60<<20 {
		t.Errorf("peak %d MB holding 64 MB, %d MB holding nothing", big>>20, small>>20)
	}
}
