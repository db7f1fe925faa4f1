package httpcall

// Indexed returns the entry of *list whose index (as index reads it) is
// i, appending one made by mk when there is none and the list holds fewer
// than max entries; nil when it is full. The logs that rebuild a relayed
// stream's answer keep their entries so (OpenAI's choices and tool calls,
// Anthropic's content blocks), each bounded against a stream that numbers
// without end.
func Indexed[T any](list *[]*T, i, max int, index func(*T) int, mk func(i int) *T) *T {
	for _, e := range *list {
		if index(e) == i {
			return e
		}
	}
	if len(*list) >= max {
		return nil
	}
	e := mk(i)
	*list = append(*list, e)
	return e
}
