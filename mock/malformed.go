package mock

// garbled writes the event of a malformed stream (KindMalformed): the
// dialect's delta event with its JSON cut off, as a proxy that mangles one
// event sends it. The stream goes on after it.
func (s *streamer) garbled() {
	s.garble = -1
	switch {
	case s.x.rt.dialect == dialectAnthropic:
		s.sw.Event("content_block_delta", []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"gar`))
	case s.x.rt.responses:
		s.sw.Event("response.output_text.delta", []byte(`{"type":"response.output_text.delta","delta":"gar`))
	default:
		s.data([]byte(`{"choices":[{"index":0,"delta":{"content":"gar`))
	}
}
