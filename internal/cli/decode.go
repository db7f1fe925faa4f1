package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/web"
)

const decodeUsage = `Usage: llmguard decode [--provider NAME|auto] --status CODE [-H 'Name: value']... [--error TEXT] [--json] [FILE]
       llmguard decode --web [FILE]

Classify one provider failure: an HTTP status, response headers and the body
(read from FILE, or stdin when FILE is absent or "-"). With --error and
--status 0 it classifies a transport error instead (no body is read).

Prints the one-line message, what kind of failure it is, and what to do.
--json prints one object with exactly the keys class, retryable, wait_seconds,
until, scope, fallback, provider_type, request_id and message.
Exit status: 0 decoded, 2 bad usage or unreadable input.

Providers: %s

Flags:
  --provider NAME   provider that answered; decides a body with two error envelopes
                    (default auto: guess from headers and body)
  --status CODE     HTTP status of the response (0 for a transport error)
  -H 'Name: value'  a response header; repeatable
  --error TEXT      transport error text, e.g. "dial tcp: connection refused"
  --json            print the verdict as JSON
  --web             write the error decoder web page to FILE (default llmguard-decoder.html;
                    "-" for stdout): one self-contained HTML file running this classifier in
                    the browser as WebAssembly, so it works offline and nothing pasted leaves it

Example:
  llmguard decode --status 529 -H 'request-id: req_011CU' <<'EOF'
  {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}
  EOF
`

// maxDecodeInput bounds how much of FILE/stdin decode reads; the classifier
// itself parses only the first 64 KiB.
const maxDecodeInput = 8 << 20

// headerFlags collects repeated -H 'Name: value' flags.
type headerFlags struct{ h http.Header }

func (f *headerFlags) String() string { return "" }

func (f *headerFlags) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return fmt.Errorf("header %q is not of the form 'Name: value'", s)
	}
	f.h.Add(name, strings.TrimSpace(value))
	return nil
}

// runDecode implements `llmguard decode`.
func runDecode(ctx context.Context, env *Env, args []string) int {
	fail := func(format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		msg = strings.Join(strings.Fields(msg), " ") // one line
		fmt.Fprintf(env.Stderr, "llmguard decode: %s\n", msg)
		return 2
	}
	d, err := parseDecode(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(env.Stderr, decodeUsage, strings.Join(classify.Providers(), ", "))
		return 0
	}
	if err != nil {
		return fail("%v", err)
	}
	if d.web {
		return writeDecoderPage(env, d.file)
	}
	body, err := d.body(env.Stdin)
	if err != nil {
		return fail("%v", err)
	}
	if err := ctx.Err(); err != nil {
		return fail("%v", err)
	}

	in := classify.Input{Provider: d.provider, Status: d.status, Header: d.headers.h, Body: body, Now: time.Now()}
	if d.errText != "" {
		in.Err = errors.New(d.errText)
	}
	v := classify.Classify(in)
	if d.asJSON {
		b, err := json.Marshal(v)
		if err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(env.Stdout, "%s\n", b)
		return 0
	}
	io.WriteString(env.Stdout, describeVerdict(v, &in))
	return 0
}

// decodeArgs are the flags and FILE of one `llmguard decode`.
type decodeArgs struct {
	provider, errText, file string
	status                  int
	asJSON, web             bool
	headers                 *headerFlags
}

// parseDecode parses args (flags before or after FILE) and checks them;
// flag.ErrHelp asks for the usage.
func parseDecode(args []string) (*decodeArgs, error) {
	d := &decodeArgs{headers: &headerFlags{h: http.Header{}}}
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&d.provider, "provider", "auto", "")
	fs.IntVar(&d.status, "status", -1, "")
	fs.StringVar(&d.errText, "error", "", "")
	fs.BoolVar(&d.asJSON, "json", false, "")
	fs.BoolVar(&d.web, "web", false, "")
	fs.Var(d.headers, "H", "")
	fs.Var(d.headers, "header", "")

	nfiles := 0
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%v (run 'llmguard decode -h')", err)
		}
		if fs.NArg() == 0 {
			break
		}
		d.file = fs.Arg(0)
		nfiles++
		rest = fs.Args()[1:]
	}
	switch {
	case nfiles > 1:
		return nil, fmt.Errorf("at most one FILE argument, got %d", nfiles)
	case d.web:
		return d, nil
	case d.status < 0:
		return nil, errors.New("--status CODE is required (0 for a transport error with --error)")
	case d.status > 999:
		return nil, fmt.Errorf("--status %d is not an HTTP status", d.status)
	case d.status == 0 && d.errText == "":
		return nil, errors.New("--status 0 needs --error TEXT (the transport error)")
	case !classify.KnownProvider(d.provider):
		return nil, fmt.Errorf("unknown provider %q (known: %s)", d.provider, strings.Join(classify.Providers(), ", "))
	}
	return d, nil
}

// body reads the response body from FILE or stdin ("-" or no FILE; none
// when only --error is given), at most maxDecodeInput bytes.
func (d *decodeArgs) body(stdin io.Reader) ([]byte, error) {
	if d.file == "" && d.errText != "" {
		return nil, nil
	}
	r, name := stdin, "stdin"
	if d.file != "" && d.file != "-" {
		f, err := os.Open(d.file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, name = f, d.file
	}
	if r == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxDecodeInput))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %v", name, err)
	}
	return b, nil
}

// describeVerdict is decode's plain output: the line, the verdict's
// fields, the guessed provider (for auto) and what to do.
func describeVerdict(v classify.Verdict, in *classify.Input) string {
	var b strings.Builder
	b.WriteString(v.Message)
	b.WriteString("\n")
	fmt.Fprintf(&b, "class: %s | retryable: %s | scope: %s | fallback: %s", v.Class, describeRetry(v), v.Scope, yesNo(v.Fallback))
	if !v.Until.IsZero() {
		fmt.Fprintf(&b, " | until: %s", v.Until.UTC().Format(time.RFC3339))
	}
	if in.Provider == "auto" || in.Provider == "" {
		if g := classify.GuessProvider(in.Header, in.Body); g != "" {
			fmt.Fprintf(&b, " | provider: %s (guessed)", g)
		}
	}
	b.WriteString("\nwhat to do: ")
	b.WriteString(v.Advice())
	b.WriteString("\n")
	return b.String()
}

func describeRetry(v classify.Verdict) string {
	switch {
	case !v.Retryable:
		return "no"
	case v.Wait > 0:
		return "yes, after " + v.Wait.String()
	}
	return "yes"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// writeDecoderPage writes the self-contained decoder page to file.
func writeDecoderPage(env *Env, file string) int {
	page := web.DecoderPage()
	if file == "-" {
		_, _ = env.Stdout.Write(page)
		return 0
	}
	if file == "" {
		file = "llmguard-decoder.html"
	}
	if err := os.WriteFile(file, page, 0o644); err != nil {
		fmt.Fprintf(env.Stderr, "llmguard decode: --web: %v\n", err)
		return 1
	}
	fmt.Fprintf(env.Stdout, "wrote the error decoder to %s (%d KiB); open it in a browser, it needs no server\n", file, len(page)>>10)
	return 0
}
