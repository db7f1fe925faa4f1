package memstore

// Keys lists the keys that have a record (for the bound tests).
func Keys(s *Store) []string { return s.keys() }
