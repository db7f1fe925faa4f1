package mock

import "strconv"

// Responses are built by appending bytes (internal/jsonw for dynamic text)
// instead of reflecting over structs.

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }
