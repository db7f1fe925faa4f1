package telemetry

import "sync"

// labelKey is a child metric's label values, in the vector's order (at
// most five; the rest empty): the key of a handles cache.
type labelKey [5]string

// maxHandles bounds each handles cache. The label values are bounded
// already (names counts any route, target or model the configuration does
// not name as "other"); past the bound a lookup goes to the vector.
const maxHandles = 4096

// handles caches the children of one metric vector by their label values.
// A request counts in several vectors; looking each child up in its vector
// hashes and validates every label value each time, where a cached child
// costs one map read. The vectors never delete a child, so a cached one
// stays the vector's.
type handles[T any] struct {
	mu   sync.RWMutex
	m    map[labelKey]T
	n    int               // the vector's label count
	with func(...string) T // the vector's WithLabelValues
}

func newHandles[T any](n int, with func(...string) T) *handles[T] {
	return &handles[T]{m: map[labelKey]T{}, n: n, with: with}
}

// get returns the child for the label values k.
func (h *handles[T]) get(k labelKey) T {
	h.mu.RLock()
	v, ok := h.m[k]
	h.mu.RUnlock()
	if ok {
		return v
	}
	return h.add(k)
}

// add looks the child up in the vector and caches it (kept apart from get,
// whose k would otherwise move to the heap on every call).
func (h *handles[T]) add(k labelKey) T {
	v := h.with(k[:h.n]...)
	h.mu.Lock()
	if len(h.m) < maxHandles {
		h.m[k] = v
	}
	h.mu.Unlock()
	return v
}
