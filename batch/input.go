package batch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
)

// Format is the shape of an input file's lines, and so of its results.
type Format string

// The input shapes, detected per file from its first well-formed line.
const (
	// FormatLLMGuard is llmguard's own: {"id", "text" | "prompt" |
	// "messages", ...}; results are llmguard's result lines.
	FormatLLMGuard Format = "llmguard"
	// FormatOpenAI is the OpenAI Batch API's input ({"custom_id", "method",
	// "url", "body"}); results are in its batch output format.
	FormatOpenAI Format = "openai"
	// FormatAnthropic is the Anthropic Message Batches request ({"custom_id",
	// "params"}); results are in its batch result format.
	FormatAnthropic Format = "anthropic"
)

// String names the format as a user knows it.
func (f Format) String() string {
	switch f {
	case FormatOpenAI:
		return "OpenAI Batch API"
	case FormatAnthropic:
		return "Anthropic Message Batches"
	}
	return "llmguard"
}

// provider is the provider whose API the format is ("" for llmguard's):
// a bare model id in its lines is that provider's model.
func (f Format) provider() string {
	switch f {
	case FormatOpenAI:
		return "openai"
	case FormatAnthropic:
		return "anthropic"
	}
	return ""
}

// MaxLineBytes bounds one input line; a longer line is malformed.
const MaxLineBytes = 32 << 20

// Input is a batch's items, validated: Open (or Read) reads every line once,
// detects the format, and finds malformed lines and duplicate ids before
// anything is sent. Only each line's id is kept; a run reads the lines
// again, one at a time, as it reaches them. An Input is immutable and safe
// for concurrent use.
type Input struct {
	// Name is the file's path (or the name given to Read), for messages.
	Name string
	// Format is the shape of the lines.
	Format Format

	path    string // "" = data
	data    []byte
	entries []entry // one per non-blank line, in order
	// needsCodec: some line is an API body (Config.Codec reads it).
	needsCodec bool
}

// entry is what the first read learnt of one line.
type entry struct {
	line  int    // 1-based
	id    string // "" when the line has none (then it is bad)
	model string // the line's own route or model ("" = the run's)
	bad   string // why the line is malformed, "" when it is not
}

// key is the entry's identity in a results file: its id, else its line.
func (e *entry) key() string {
	if e.id != "" {
		return e.id
	}
	return "line:" + strconv.Itoa(e.line)
}

// Len is the number of items (non-blank lines, malformed ones included).
func (in *Input) Len() int { return len(in.entries) }

// Open reads and validates the input file at path (see Input). A duplicate
// id is an error; a malformed line is not: it is recorded as failed, with
// its line number, when the run reaches it.
func Open(path string) (*Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	in := &Input{Name: path, path: path}
	return in, in.scan(f)
}

// Read is Open for input held in memory (the MCP tool's list).
func Read(name string, data []byte) (*Input, error) {
	in := &Input{Name: name, data: data}
	return in, in.scan(bytes.NewReader(data))
}

// open returns a reader of the input's lines from the start.
func (in *Input) open() (io.ReadCloser, error) {
	if in.path == "" {
		return io.NopCloser(bytes.NewReader(in.data)), nil
	}
	return os.Open(in.path)
}

// probe is what the first read decodes of a line: enough to tell its
// format, its id and its model.
type probe struct {
	ID       json.RawMessage `json:"id"`
	CustomID json.RawMessage `json:"custom_id"`
	Params   *struct {
		Model string `json:"model"`
	} `json:"params"`
	Body *struct {
		Model string `json:"model"`
	} `json:"body"`
	Method   *string         `json:"method"`
	URL      *string         `json:"url"`
	Route    string          `json:"route"`
	Model    string          `json:"model"`
	Messages json.RawMessage `json:"messages"`
}

func (p *probe) format() Format {
	switch {
	case p.CustomID != nil && p.Params != nil:
		return FormatAnthropic
	case p.CustomID != nil && (p.Body != nil || p.URL != nil || p.Method != nil):
		return FormatOpenAI
	}
	return FormatLLMGuard
}

func (in *Input) scan(r io.Reader) error {
	first := map[string]int{} // id → line
	var dup error
	dups := 0
	err := eachLine(r, func(n int, b []byte, tooLong bool) error {
		e := entry{line: n}
		if tooLong {
			e.bad = fmt.Sprintf("line %d: longer than %d MiB", n, MaxLineBytes>>20)
		} else {
			in.probe(&e, b)
		}
		if e.id != "" {
			if at, ok := first[e.id]; ok {
				if dup == nil {
					dup = fmt.Errorf("%s: id %q is on lines %d and %d: ids must be unique (results are matched and resumed by id)", in.Name, e.id, at, n)
				}
				dups++
			} else {
				first[e.id] = n
			}
		}
		in.entries = append(in.entries, e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	if dup != nil {
		if dups > 1 {
			return fmt.Errorf("%w (and %d more repeated ids)", dup, dups-1)
		}
		return dup
	}
	if in.Format == "" {
		in.Format = FormatLLMGuard
	}
	return nil
}

// probe reads one line's format, id and model into e, or why it is bad.
func (in *Input) probe(e *entry, b []byte) {
	var p probe
	if err := rawjson.Unmarshal(b, &p); err != nil {
		e.bad = fmt.Sprintf("line %d: not a JSON object: %v", e.line, err)
		return
	}
	f := p.format()
	if in.Format == "" {
		in.Format = f
	}
	idField, raw := "id", p.ID
	if in.Format != FormatLLMGuard {
		idField, raw = "custom_id", p.CustomID
	}
	id, err := idOf(raw)
	if err == nil {
		e.id = id
	}
	switch {
	case f != in.Format:
		e.bad = fmt.Sprintf("line %d: %s format, but the file's first line is %s format (one format per file)", e.line, f, in.Format)
	case err != nil:
		e.bad = fmt.Sprintf("line %d: %q %v", e.line, idField, err)
	case id == "":
		e.bad = fmt.Sprintf("line %d: no %q (each line needs a unique one)", e.line, idField)
	case f == FormatAnthropic:
		e.model, in.needsCodec = p.Params.Model, true
	case f == FormatOpenAI:
		e.bad, in.needsCodec = openAIEndpoint(e.line, p.Method, p.URL), true
		if p.Body != nil {
			e.model = p.Body.Model
		}
	default:
		e.model = p.Route
		if e.model == "" {
			e.model = p.Model
		}
		in.needsCodec = in.needsCodec || p.Messages != nil
	}
}

// openAIEndpoint is why an OpenAI Batch API line's method and url cannot
// run, "" when they can.
func openAIEndpoint(line int, method, url *string) string {
	if method != nil && !strings.EqualFold(*method, "POST") {
		return fmt.Sprintf("line %d: method %q: only POST is supported", line, *method)
	}
	if url == nil {
		return fmt.Sprintf("line %d: no \"url\" (/v1/chat/completions)", line)
	}
	if u := strings.TrimSuffix(*url, "/"); u != "/v1/chat/completions" && u != "/chat/completions" {
		return fmt.Sprintf("line %d: url %q: llmguard batch runs /v1/chat/completions requests only", line, *url)
	}
	return ""
}

// idOf is an id's text: a JSON string, or a number as written.
func idOf(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || rawjson.IsNull(raw) {
		return "", nil
	}
	if raw[0] == '"' {
		s, err := rawjson.String(raw)
		if err != nil {
			return "", errors.New("is not a valid string")
		}
		return s, nil
	}
	if rawjson.Number(raw) {
		return string(raw), nil
	}
	return "", errors.New("must be a string or a number")
}

// eachLine calls fn for each non-blank line of r (without its newline and
// surrounding space), numbered from 1. A line longer than MaxLineBytes is
// passed as tooLong, without its bytes.
func eachLine(r io.Reader, fn func(n int, b []byte, tooLong bool) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		tooLong := false
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				if !tooLong && len(long)+len(b) > MaxLineBytes {
					tooLong, long = true, long[:0]
				}
				if !tooLong {
					long = append(long, b...)
				}
			}
			b = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if t := bytes.TrimSpace(b); len(t) > 0 || tooLong {
			if ferr := fn(n, t, tooLong); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			return nil // io.EOF
		}
	}
}
