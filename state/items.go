package state

import "context"

// Item is one stored item: a value under a key, both the caller's. The
// gateway keeps the output items of its translated Responses API answers
// this way (key: the client's scope and the item's id; value: the item as
// a request's input would carry it), so that a later request's
// item_reference can name them.
type Item struct {
	Key   string
	Value []byte
}

// ItemStore keeps items for a while, within bounds of count and bytes. It
// may drop any item at any time (a bound reached, idle too long, another
// process's store, a restart): callers handle a missing item. Values are
// not modified after PutItems, by the store or the caller. Implementations
// are safe for concurrent use.
type ItemStore interface {
	// PutItems stores items, each replacing what its key held. An item too
	// large for the store's bounds is not stored.
	PutItems(ctx context.Context, items []Item) error
	// GetItems returns the values at keys, in the order of keys, nil where
	// there is none. Reading an item keeps it alive as writing it does.
	GetItems(ctx context.Context, keys []string) ([][]byte, error)
}
