package classify_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/classify"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the -- want -- sections of testdata/*.txtar")

// fixedNow is the reference time every fixture is classified at.
var fixedNow = time.Date(2026, 8, 21, 14, 2, 0, 0, time.UTC)

// fixture is one testdata/*.txtar case.
type fixture struct {
	name    string
	path    string
	archive *txtar.Archive
	input   classify.Input
	want    []byte
}

// loadFixtures reads every testdata/*.txtar file. Each holds a comment
// citing its source and three files:
//
//	-- input --   "provider: NAME", "status: CODE", optional "error: TEXT",
//	              then "header: Name: value" lines
//	-- body --    the response body, byte for byte (a final newline is trimmed)
//	-- want --    the verdict JSON as `llmguard decode --json` prints it
func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fixture
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		fx := fixture{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), path: p, archive: a}
		fx.input.Now = fixedNow
		fx.input.Header = http.Header{}
		for _, f := range a.Files {
			switch f.Name {
			case "input":
				if err := parseInput(string(f.Data), &fx.input); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
			case "body":
				fx.input.Body = bytes.TrimSuffix(f.Data, []byte("\n"))
			case "want":
				fx.want = bytes.TrimSpace(f.Data)
			}
		}
		out = append(out, fx)
	}
	return out
}

func parseInput(s string, in *classify.Input) error {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return errors.New("bad input line " + strconv.Quote(line))
		}
		v = strings.TrimSpace(v)
		switch k {
		case "provider":
			in.Provider = v
		case "status":
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			in.Status = n
		case "error":
			in.Err = errors.New(v)
		case "header":
			hk, hv, ok := strings.Cut(v, ":")
			if !ok {
				return errors.New("bad header line " + strconv.Quote(line))
			}
			in.Header.Add(strings.TrimSpace(hk), strings.TrimSpace(hv))
		default:
			return errors.New("unknown input key " + strconv.Quote(k))
		}
	}
	return nil
}

func TestFixtures(t *testing.T) {
	fixtures := loadFixtures(t)
	if len(fixtures) < 60 {
		t.Errorf("only %d fixtures; the issue asks for at least 60", len(fixtures))
	}
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			if len(fx.archive.Comment) == 0 || !bytes.Contains(bytes.ToLower(fx.archive.Comment), []byte("source")) {
				t.Errorf("fixture comment must cite its source")
			}
			v := classify.Classify(fx.input)
			got, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			checkVerdictInvariants(t, v)
			if *update {
				writeWant(t, fx, got)
				return
			}
			if fx.want == nil {
				t.Fatalf("no -- want -- section; run go test -run TestFixtures -update")
			}
			if !bytes.Equal(got, fx.want) {
				t.Errorf("verdict mismatch\n got: %s\nwant: %s", got, fx.want)
			}
		})
	}
}

func writeWant(t *testing.T, fx fixture, got []byte) {
	t.Helper()
	a := fx.archive
	found := false
	for i := range a.Files {
		if a.Files[i].Name == "want" {
			a.Files[i].Data = append(got, '\n')
			found = true
		}
	}
	if !found {
		a.Files = append(a.Files, txtar.File{Name: "want", Data: append(got, '\n')})
	}
	if err := os.WriteFile(fx.path, txtar.Format(a), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkVerdictInvariants holds for every verdict, whatever the input.
func checkVerdictInvariants(t testing.TB, v classify.Verdict) {
	t.Helper()
	if v.Class == "" || v.Scope == "" {
		t.Errorf("class %q scope %q must be set", v.Class, v.Scope)
	}
	if strings.ContainsAny(v.Message, "\r\n") {
		t.Errorf("message has a newline: %q", v.Message)
	}
	if n := len(v.Message); n > classify.MaxLine+len("…") {
		t.Errorf("message is %d bytes long: %q", n, v.Message)
	}
	if v.Wait < 0 || (!v.Retryable && v.Wait != 0) {
		t.Errorf("wait %v with retryable %v", v.Wait, v.Retryable)
	}
	if v.Advice() == "" {
		t.Errorf("empty advice")
	}
}
