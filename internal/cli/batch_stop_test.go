package cli

import "testing"

// TestBatchStop: one Ctrl-C reaches the batch run twice, on its signal
// channel and as the end of the command's context (main's
// signal.NotifyContext), in either order; neither order aborts the items
// in flight, and only a second Ctrl-C does.
func TestBatchStop(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events string // s: a signal, c: the context's end
		stops  int
		abort  bool
	}{
		{"signal, then its context", "sc", 1, false},
		{"context, then its signal", "cs", 1, false},
		{"context alone", "c", 1, false},
		{"two Ctrl-C", "scs", 1, true},
		{"two Ctrl-C, the context first", "css", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st batchStop
			stops, abort := 0, false
			for _, e := range tc.events {
				var s, a bool
				if e == 's' {
					s, a = st.signal()
				} else {
					s = st.ctxDone()
				}
				if s {
					stops++
				}
				abort = abort || a
			}
			if stops != tc.stops || abort != tc.abort {
				t.Errorf("%s: %d stops, abort %v; want %d, %v", tc.events, stops, abort, tc.stops, tc.abort)
			}
		})
	}
}
