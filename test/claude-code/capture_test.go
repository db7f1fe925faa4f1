package claudecode

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/llmguard/llmguard/test/harness"
)

var update = flag.Bool("update", false, "rewrite gateway/testdata/claude-code from what Claude Code sends")

// fixtureDir holds what Claude Code sends, for the gateway's decoding tests.
var fixtureDir = filepath.Join("..", "..", "gateway", "testdata", "claude-code")

// A capture is one fixture: Claude Code runs, one after the other in one
// workspace, against the healthy mock; every request is kept.
type capture struct {
	name, about string
	files       map[string]string // written to the project directory first
	runs        [][]string        // prompt, then args; "{session}" is the previous run's session id
}

var captures = []capture{
	{name: "hello", about: "the default model and tools; one request",
		runs: [][]string{{"Say hello"}}},
	{name: "tool-result", about: "the default model with only the Read tool; the mock calls Read, Claude Code sends the tool result back",
		files: map[string]string{"notes.txt": "hello notes\n"},
		runs:  [][]string{{"Please read notes.txt", "--tools", "Read", "--max-turns", "3"}}},
	{name: "resume", about: "a second prompt resuming the first session: the history is sent again",
		runs: [][]string{{"Say hello"}, {"Now say goodbye", "--resume", "{session}"}}},
	{name: "sonnet-no-tools", about: "--model claude-sonnet-4-5 --tools \"\"",
		runs: [][]string{{"Say hello", "--model", "claude-sonnet-4-5", "--tools", ""}}},
}

// TestClaudeCodeRequests runs Claude Code against the mock (no gateway) and
// compares the shape of what it sends (method, path, header names, body
// keys, message roles and content types, tool names) with the fixtures in
// gateway/testdata/claude-code; -update rewrites them. A new Claude Code
// version in package-lock.json that sends something new fails here first.
func TestClaudeCodeRequests(t *testing.T) {
	claude, version := claudeBinary(t)
	_, murl := harness.StartMock(t, nil)
	for _, c := range captures {
		t.Run(c.name, func(t *testing.T) {
			rec := newRecorder(t, murl)
			ws := newWorkspace(t)
			for name, body := range c.files {
				if err := os.WriteFile(filepath.Join(ws.dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var session string
			var cmds []string
			for _, run := range c.runs {
				args := slices.Clone(run[1:])
				for i, a := range args {
					args[i] = strings.ReplaceAll(a, "{session}", session)
				}
				res, _ := ws.run(t, claude, rec, rec.URL, "sk-ant-test-0000", 60*time.Second, run[0], args...)
				if res.IsError || !strings.HasPrefix(res.Result, "Mock answer from ") {
					t.Fatalf("claude -p %q: %+v", run[0], res)
				}
				session = res.SessionID
				cmds = append(cmds, "claude -p "+quoteArgs(run))
			}
			ex := rec.take()
			if len(ex) == 0 {
				t.Fatal("Claude Code sent nothing to the recorder")
			}
			path := filepath.Join(fixtureDir, c.name+".txtar")
			if *update {
				writeFixture(t, path, version, c, cmds, ex, ws)
				return
			}
			want := fixtureShapes(t, path)
			var got []shape
			for _, e := range ex {
				got = append(got, shapeOf(t, e.Method, e.URI, e.Header, e.Body))
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Claude Code %s sends something else than %s (-fixture +now); if that is the new version's doing, rerun with -update:\n%s", version, path, d)
			}
		})
	}
}

func quoteArgs(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a == "" || strings.ContainsAny(a, " \"{}") {
			fmt.Fprintf(&b, "%q", a)
		} else {
			b.WriteString(a)
		}
	}
	return b.String()
}

// volatile values replaced in fixtures, so that -update diffs show what
// changed in Claude Code rather than in the run.
var (
	uuidRE     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	deviceIDRE = regexp.MustCompile(`\\"device_id\\":\\"[0-9a-f]{64}\\"`)
	dropHeader = map[string]bool{"Host": true, "Content-Length": true, "Connection": true}
)

func writeFixture(t *testing.T, path, version string, c capture, cmds []string, ex []exchange, ws workspace) {
	t.Helper()
	ar := &txtar.Archive{Comment: []byte(fmt.Sprintf(
		"Claude Code %s (@anthropic-ai/claude-code, pinned in test/claude-code/package-lock.json):\n%s\n%s.\n"+
			"Each request: N.http is the request line and headers (key masked; Host, Content-Length and\n"+
			"Connection left out), N.json the body, re-indented. HOME is /home/user, the project\n"+
			"/home/user/project; session and device ids are zeroed. Captured against llmguard mock;\n"+
			"rewrite with: go test ./test/claude-code -run TestClaudeCodeRequests -update\n",
		version, strings.Join(cmds, "\n"), c.about))}
	for i, e := range ex {
		var h strings.Builder
		fmt.Fprintf(&h, "%s %s\n", e.Method, e.URI)
		names := make([]string, 0, len(e.Header))
		for k := range e.Header {
			if !dropHeader[k] {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		for _, k := range names {
			for _, v := range e.Header[k] {
				if k == "X-Api-Key" || k == "Authorization" {
					v = "…" + v[max(0, len(v)-4):]
				}
				fmt.Fprintf(&h, "%s: %s\n", strings.ToLower(k), normalize(v, ws))
			}
		}
		body := []byte(normalize(string(e.Body), ws))
		var ind bytes.Buffer
		if err := json.Indent(&ind, body, "", "  "); err == nil {
			body = append(ind.Bytes(), '\n')
		}
		ar.Files = append(ar.Files,
			txtar.File{Name: fmt.Sprintf("%d.http", i+1), Data: []byte(h.String())},
			txtar.File{Name: fmt.Sprintf("%d.json", i+1), Data: body})
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d requests)", path, len(ex))
}

func normalize(s string, ws workspace) string {
	s = strings.ReplaceAll(s, ws.home, "/home/user")
	s = uuidRE.ReplaceAllString(s, "00000000-0000-4000-8000-000000000000")
	return deviceIDRE.ReplaceAllString(s, `\"device_id\":\"`+strings.Repeat("0", 64)+`\"`)
}

// shape is what must stay the same between two captures of one Claude Code
// version: everything but the text.
type shape struct {
	Request  string   // "POST /v1/messages?beta=true"
	Headers  []string // names, sorted
	Keys     []string // the body's top-level keys, sorted
	Model    string
	System   string   // "string", "text,text" (block types) or ""
	Messages []string // "user:text,text", "system:string", …
	Tools    []string
}

func shapeOf(t *testing.T, method, uri string, h map[string][]string, body []byte) shape {
	t.Helper()
	s := shape{Request: method + " " + uri}
	for k := range h {
		if !dropHeader[k] && !dropHeader[httpCanonical(k)] {
			s.Headers = append(s.Headers, strings.ToLower(k))
		}
	}
	slices.Sort(s.Headers)
	var b struct {
		Model    string            `json:"model"`
		System   json.RawMessage   `json:"system"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		t.Fatalf("%s: body is not a JSON object: %v", s.Request, err)
	}
	for k := range keys {
		s.Keys = append(s.Keys, k)
	}
	slices.Sort(s.Keys)
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("%s: %v", s.Request, err)
	}
	s.Model, s.System = b.Model, contentShape(b.System)
	for _, raw := range b.Messages {
		var msg struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &msg); err != nil {
			t.Fatalf("%s: message: %v", s.Request, err)
		}
		s.Messages = append(s.Messages, msg.Role+":"+contentShape(msg.Content))
	}
	for _, tl := range b.Tools {
		s.Tools = append(s.Tools, tl.Name)
	}
	return s
}

func httpCanonical(k string) string {
	parts := strings.Split(strings.ToLower(k), "-")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "-")
}

// contentShape is "string" for a string, the block types joined by commas
// for a list, "" for nothing.
func contentShape(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		return "string"
	}
	var blocks []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return "?"
	}
	types := make([]string, len(blocks))
	for i, bl := range blocks {
		types[i] = bl.Type
	}
	return strings.Join(types, ",")
}

// fixtureShapes reads a fixture's requests back as shapes.
func fixtureShapes(t *testing.T, path string) []shape {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	var out []shape
	for i := 0; i+1 < len(ar.Files); i += 2 {
		head, body := ar.Files[i], ar.Files[i+1]
		lines := strings.Split(strings.TrimSuffix(string(head.Data), "\n"), "\n")
		h := map[string][]string{}
		for _, l := range lines[1:] {
			k, v, _ := strings.Cut(l, ": ")
			h[k] = append(h[k], v)
		}
		method, uri, _ := strings.Cut(lines[0], " ")
		out = append(out, shapeOf(t, method, uri, h, body.Data))
	}
	return out
}
