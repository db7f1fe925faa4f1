package batch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/llmguard/llmguard/internal/rawjson"
)

// ErrNoDir is returned (wrapped, with the path) when the results file's
// directory does not exist.
var ErrNoDir = errors.New("directory does not exist")

// ErrBusy is returned (wrapped) when another run holds the results file.
var ErrBusy = errors.New("another llmguard batch is writing it")

// results is the results file: what it holds at the start of a run, and
// the appends of this run.
type results struct {
	path string
	f    *os.File
	// done maps each key whose record counts (ok, and failed unless
	// retried) to its status.
	done map[string]Status
	ok   int // records kept of each status
	bad  int
	// truncated is the length of an unterminated last line cut off at open
	// (a write the previous run never finished), 0 when none.
	truncated int64
}

// resultHead is what a run reads of a results line in any format.
type resultHead struct {
	ID       *string `json:"id"`
	CustomID *string `json:"custom_id"`
	Status   Status  `json:"status"`
	Line     int     `json:"line"`
	Response *struct {
		StatusCode int `json:"status_code"`
	} `json:"response"`
	Result *struct {
		Type string `json:"type"`
	} `json:"result"`
	LLMGuard *struct {
		Status Status `json:"status"`
		Line   int    `json:"line"`
	} `json:"llmguard"`
}

// parse returns the line's format, key and status.
func (h *resultHead) parse() (Format, string, Status) {
	f, st, line := FormatLLMGuard, h.Status, h.Line
	id := ""
	switch {
	case h.CustomID != nil && h.Result != nil:
		f, id = FormatAnthropic, *h.CustomID
		st = StatusFailed
		switch h.Result.Type {
		case "succeeded":
			st = StatusOK
		case "canceled", "expired":
			st = StatusCanceled
		}
	case h.CustomID != nil:
		f, id = FormatOpenAI, *h.CustomID
		st = StatusFailed
		if h.Response != nil && h.Response.StatusCode == 200 {
			st = StatusOK
		}
	case h.ID != nil:
		id = *h.ID
	}
	if g := h.LLMGuard; g != nil {
		if g.Status != "" {
			st = g.Status
		}
		if line == 0 {
			line = g.Line
		}
	}
	if id == "" {
		id = "line:" + strconv.Itoa(line)
	}
	return f, id, st
}

// openResults opens (or creates) the results file at path for a run of an
// input in format, locks it against a second run, cuts off an unfinished
// last line, and reads which items are done. Records that do not count
// (canceled ones; failed ones with retryFailed; all but the last record of
// a key) are dropped by rewriting the file, so that after the run each id
// has exactly one record.
func openResults(path string, format Format, retryFailed bool) (*results, error) {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: %w: %s", path, ErrNoDir, dir)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%v)", path, ErrBusy, err)
	}
	r := &results{path: path, f: f, done: map[string]Status{}}
	keep, compact, err := r.read(format, retryFailed)
	if err == nil && compact {
		err = r.rewrite(keep)
	}
	if err != nil {
		r.f.Close()
		return nil, err
	}
	return r, nil
}

// read scans the file: done, and which lines (by number) to keep when it
// must be rewritten.
func (r *results) read(format Format, retryFailed bool) (keep map[int]bool, compact bool, err error) {
	last := map[string]int{} // key → line of its last record
	status := map[int]Status{}
	var end int64 // offset after the last complete line
	n := 0
	br := bufio.NewReaderSize(io.NewSectionReader(r.f, 0, 1<<62), 64<<10)
	for {
		b, rerr := br.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return nil, false, rerr
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			r.truncated = int64(len(b)) // a write the last run never finished
			break
		}
		if len(b) == 0 {
			break
		}
		n++
		end += int64(len(b))
		var h resultHead
		if err := rawjson.Unmarshal(b, &h); err != nil {
			return nil, false, fmt.Errorf("%s:%d: not a result line (%v); move the file aside or remove that line", r.path, n, err)
		}
		f, key, st := h.parse()
		if f != format {
			return nil, false, fmt.Errorf("%s holds %s results but the input is in the %s format: use another output file", r.path, f, format)
		}
		if prev, ok := last[key]; ok {
			compact = true
			if status[prev] == StatusOK && st != StatusOK {
				continue // an answer stands
			}
		}
		last[key], status[n] = n, st
	}
	if r.truncated > 0 {
		if err := r.f.Truncate(end); err != nil {
			return nil, false, err
		}
	}
	keep = map[int]bool{}
	for key, line := range last {
		st := status[line]
		switch {
		case st == StatusOK:
			r.ok++
		case st == StatusFailed && !retryFailed:
			r.bad++
		default:
			compact = true
			continue
		}
		r.done[key] = st
		keep[line] = true
	}
	return keep, compact, nil
}

// rewrite replaces the file by one holding only the lines in keep, through
// a locked temporary file renamed over it, so a crash leaves either file
// whole.
func (r *results) rewrite(keep map[int]bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(r.path), "."+filepath.Base(r.path)+".tmp-*")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := lockFile(tmp); err != nil {
		return fail(err)
	}
	if st, err := r.f.Stat(); err == nil {
		_ = tmp.Chmod(st.Mode().Perm() &^ fs.ModeType)
	}
	w := bufio.NewWriterSize(tmp, 64<<10)
	br := bufio.NewReaderSize(io.NewSectionReader(r.f, 0, 1<<62), 64<<10)
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 && b[len(b)-1] == '\n' && keep[n] {
			w.Write(b)
		}
		if err != nil {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), r.path); err != nil {
		return fail(err)
	}
	syncDir(filepath.Dir(r.path))
	// The new file, locked since before it had its name, is the one this
	// run appends to (its offset is at its end).
	r.f.Close()
	r.f = tmp
	return nil
}

// syncDir makes a rename in dir durable (best effort).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// append writes lines and makes them durable before it returns.
func (r *results) append(b []byte) error {
	if _, err := r.f.Write(b); err != nil {
		return err
	}
	return r.f.Sync()
}

func (r *results) close() error { return r.f.Close() }
