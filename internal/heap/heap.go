// Package heap measures the Go heap for the tests that bound memory: what
// a run of hostile requests leaves held once the garbage is collected.
// Imported by tests only.
//
//	before := heap.Live()
//	// ... ten requests with 5 MB model names ...
//	if grown := int64(heap.Live()) - int64(before); grown > 16<<20 {
//		t.Errorf("heap grew by %d MB", grown>>20)
//	}
package heap

import "runtime"

// Live runs a garbage collection and returns the bytes of heap objects
// still allocated (runtime.MemStats.HeapAlloc) after it. It is safe for
// concurrent use; it stops the world twice, so it is for tests, not for
// hot paths.
func Live() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
