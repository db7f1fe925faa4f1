//go:build !unix

package batch

import "os"

// lockFile is a no-op where flock(2) is not available: two runs on one
// results file are then the user's to avoid.
func lockFile(*os.File) error { return nil }
