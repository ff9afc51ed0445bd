package httprpc

import "testing"

// TestConnsFor: half the files the process may open, between 256 and
// 16,384; three quarters of them for one address.
func TestConnsFor(t *testing.T) {
	for files, want := range map[uint64]int{0: 16384, 256: 256, 1024: 512, 20000: 10000, 1 << 20: 16384} {
		if got := connsFor(files); got != want {
			t.Errorf("connsFor(%d) = %d, want %d", files, got, want)
		}
	}
	for limit, want := range map[int]int{1: 1, 4: 3, 10000: 7500} {
		if got := perAddress(limit); got != want {
			t.Errorf("perAddress(%d) = %d, want %d", limit, got, want)
		}
	}
	if DefaultMaxConns() < 256 {
		t.Errorf("DefaultMaxConns() = %d, below 256", DefaultMaxConns())
	}
}

// TestIdleConnsFor: a quarter of the files the process may open, between
// 256 and 4,096; 4,096 when the system does not say.
func TestIdleConnsFor(t *testing.T) {
	for files, want := range map[uint64]int{0: 4096, 1024: 256, 4096: 1024, 10000: 2500, 16384: 4096, 1 << 20: 4096} {
		if got := idleConnsFor(files); got != want {
			t.Errorf("idleConnsFor(%d) = %d, want %d", files, got, want)
		}
	}
}
