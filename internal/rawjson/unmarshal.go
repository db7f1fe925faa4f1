package rawjson

import (
	stdjson "encoding/json"

	"github.com/segmentio/encoding/json"
)

// Unmarshal is json.Unmarshal of the project's JSON library
// (github.com/segmentio/encoding/json, a drop-in for encoding/json about
// four times faster), except that a failure is reported as encoding/json
// reports it: the library's errors quote the rest of the input, an echo of
// a client's or a provider's body that has no place in a one-line error.
// On that path (rare, so its cost does not matter) data is decoded again by
// encoding/json, whose verdict stands; what v holds after an error is
// unspecified.
func Unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return stdjson.Unmarshal(data, v)
	}
	return nil
}
