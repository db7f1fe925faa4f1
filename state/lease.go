package state

import (
	"context"
	"time"
)

// LeaseStore holds leases on a limited number of slots per key (a
// target's concurrency cap across replicas): at most limit unexpired
// leases on a key at once. A lease expires ttl after it was taken or last
// renewed, so the leases of a process that died go by themselves; its
// holder renews it while it needs it. Lease names are the caller's and
// unique. Implementations are safe for concurrent use.
type LeaseStore interface {
	// AcquireLease takes the lease id on key for ttl unless limit unexpired
	// leases are held there (false).
	AcquireLease(ctx context.Context, key, id string, limit int, ttl time.Duration) (bool, error)
	// RenewLease extends the lease id on key to ttl from now; false when it is
	// not held (it expired, or was released).
	RenewLease(ctx context.Context, key, id string, ttl time.Duration) (bool, error)
	// ReleaseLease gives the lease id on key back (nothing when it is not held).
	ReleaseLease(ctx context.Context, key, id string) error
}
