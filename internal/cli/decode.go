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
)

const decodeUsage = `Usage: llmguard decode [--provider NAME|auto] --status CODE [-H 'Name: value']... [--error TEXT] [--json] [FILE]

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
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	provider := fs.String("provider", "auto", "")
	status := fs.Int("status", -1, "")
	errText := fs.String("error", "", "")
	asJSON := fs.Bool("json", false, "")
	headers := &headerFlags{h: http.Header{}}
	fs.Var(headers, "H", "")
	fs.Var(headers, "header", "")

	// Flags may come before or after FILE.
	var file string
	nfiles := 0
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(env.Stderr, decodeUsage, strings.Join(classify.Providers(), ", "))
				return 0
			}
			return fail("%v (run 'llmguard decode -h')", err)
		}
		if fs.NArg() == 0 {
			break
		}
		file = fs.Arg(0)
		nfiles++
		rest = fs.Args()[1:]
	}
	if nfiles > 1 {
		return fail("at most one FILE argument, got %d", nfiles)
	}
	if *status < 0 {
		return fail("--status CODE is required (0 for a transport error with --error)")
	}
	if *status > 999 {
		return fail("--status %d is not an HTTP status", *status)
	}
	if *status == 0 && *errText == "" {
		return fail("--status 0 needs --error TEXT (the transport error)")
	}
	if !classify.KnownProvider(*provider) {
		return fail("unknown provider %q (known: %s)", *provider, strings.Join(classify.Providers(), ", "))
	}

	var body []byte
	if file != "" || *errText == "" {
		var r io.Reader = env.Stdin
		name := "stdin"
		if file != "" && file != "-" {
			f, err := os.Open(file)
			if err != nil {
				return fail("%v", err)
			}
			defer f.Close()
			r, name = f, file
		}
		if r != nil {
			b, err := io.ReadAll(io.LimitReader(r, maxDecodeInput))
			if err != nil {
				return fail("reading %s: %v", name, err)
			}
			body = b
		}
	}
	if err := ctx.Err(); err != nil {
		return fail("%v", err)
	}

	in := classify.Input{Provider: *provider, Status: *status, Header: headers.h, Body: body, Now: time.Now()}
	if *errText != "" {
		in.Err = errors.New(*errText)
	}
	v := classify.Classify(in)

	if *asJSON {
		b, err := json.Marshal(v)
		if err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(env.Stdout, "%s\n", b)
		return 0
	}
	var b strings.Builder
	b.WriteString(v.Message)
	b.WriteString("\n")
	fmt.Fprintf(&b, "class: %s | retryable: %s | scope: %s | fallback: %s", v.Class, describeRetry(v), v.Scope, yesNo(v.Fallback))
	if !v.Until.IsZero() {
		fmt.Fprintf(&b, " | until: %s", v.Until.UTC().Format(time.RFC3339))
	}
	p := *provider
	if p == "auto" || p == "" {
		if g := classify.GuessProvider(in.Header, in.Body); g != "" {
			fmt.Fprintf(&b, " | provider: %s (guessed)", g)
		}
	}
	b.WriteString("\nwhat to do: ")
	b.WriteString(v.Advice())
	b.WriteString("\n")
	io.WriteString(env.Stdout, b.String())
	return 0
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
