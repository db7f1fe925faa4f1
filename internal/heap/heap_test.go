package heap

import (
	"runtime"
	"testing"
)

// TestLive: 32 MB held shows in Live; once dropped, the collection Live
// runs takes it back. The margin (2 MB) is what the runtime and the test
// binary allocate and free meanwhile.
func TestLive(t *testing.T) {
	const size, margin = 32 << 20, 2 << 20
	before := Live()
	held := make([]byte, size)
	held[size-1] = 1
	with := Live()
	runtime.KeepAlive(held)
	after := Live()
	if grown := int64(with) - int64(before); grown < size-margin {
		t.Errorf("holding %d MB: Live grew by %d KB", size>>20, grown>>10)
	}
	if freed := int64(with) - int64(after); freed < size-margin {
		t.Errorf("dropping %d MB: Live fell by %d KB", size>>20, freed>>10)
	}
}
