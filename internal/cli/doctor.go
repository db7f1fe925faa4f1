package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/state/redisstore"
)

// maxClockSkew is the difference between the local clock and a provider's
// Date header beyond which doctor warns (signed requests, quota resets and
// retry-after dates go wrong).
const maxClockSkew = 30 * time.Second

// doctorUsage is the help of llmguard doctor, before its flags.
const doctorUsage = `Usage: llmguard doctor [--config FILE] [--timeout 10s] [--probe]

Checks the configuration, each provider's key (a model listing: no tokens spent), base-URL reachability,
key shapes (whitespace or quotes pasted in, a key in the wrong variable) and clock skew.
Exit status 1 when anything needs fixing. Keys are never printed, only masked.

`

// runDoctor checks the configuration, every provider key with a cheap
// authenticated call, base-URL reachability, key shapes and clock skew, and
// prints one row per provider. Exit 1 on any problem.
func runDoctor(ctx context.Context, env *Env, args []string) int {
	fs := newFlagSet(env, "doctor", doctorUsage)
	configPath := fs.String("config", "", "configuration file (default: $LLMGUARD_CONFIG, ./llmguard.yaml, else zero config from provider keys in the environment)")
	timeout := fs.Duration("timeout", 10*time.Second, "time allowed for each provider's check")
	probe := fs.Bool("probe", false, "also send a 1-token chat request to each provider's default model (spends a few tokens; catches quota and billing problems a model listing does not)")
	if code, ok := parseFlags(fs, args, env); !ok {
		return code
	}
	d := &doctor{env: env, timeout: *timeout, probe: *probe, now: time.Now}
	return d.run(ctx, *configPath)
}

// doctor holds one run's findings.
type doctor struct {
	env      *Env
	timeout  time.Duration
	probe    bool
	now      func() time.Time
	problems int
	warnings int
}

// finding is one line under a provider's row.
type finding struct {
	problem bool // false: a warning
	text    string
}

// row is the outcome for one provider.
type row struct {
	name, key, base, status string
	ok                      bool
	findings                []finding
}

func (d *doctor) out(format string, a ...any) { fmt.Fprintf(d.env.Stdout, format, a...) }

// source resolves the configuration like config.LoadDefault does, but
// returns the bytes so that doctor can Parse and Validate separately and
// keep checking providers past a validation error.
func (d *doctor) source(path string) (name string, data []byte, err error) {
	if path == "" {
		path = d.env.Getenv("LLMGUARD_CONFIG")
	}
	if path == "" {
		if _, err := os.Stat(config.DefaultFile); err == nil {
			path = config.DefaultFile
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", nil, err
		}
	}
	if path == "" {
		return config.SourceEnvironment, nil, nil
	}
	data, err = os.ReadFile(path)
	return path, data, err
}

func (d *doctor) run(ctx context.Context, path string) int {
	name, data, err := d.source(path)
	if err != nil {
		d.out("✗ config: %v\n", err)
		d.problems++
		d.finish()
		return 1
	}
	var cfg *config.Config
	if name == config.SourceEnvironment {
		d.out("config: none (zero config from the provider keys in the environment)\n")
	} else {
		d.out("config: %s\n", name)
	}
	cfg, err = config.Parse(name, data, d.env.Getenv)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			d.out("  ✗ %s\n", line)
			d.problems++
		}
	} else {
		d.out("  ✓ valid\n")
	}
	shapes := envKeyShapes(d.env.Getenv)
	if cfg == nil {
		d.printShapesOnly(shapes)
		d.finish()
		return 1
	}
	d.state(ctx, cfg)
	names := make([]string, 0, len(cfg.Providers))
	for n := range cfg.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 1 && isSim(cfg.Providers[names[0]]) {
		d.noKeys()
		d.printShapesOnly(shapes)
		d.finish()
		return 1
	}
	rows := make([]row, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i] = d.check(ctx, n, cfg.Providers[n])
		}()
	}
	wg.Wait()
	d.out("\nproviders:\n")
	seenShape := map[string]bool{}
	for _, r := range rows {
		if p := cfg.Providers[r.name]; p != nil {
			if info, ok := p.Info(); ok {
				if v := p.KeyVar(); v != "" {
					r.findings = append(shapes[v], r.findings...)
					seenShape[v] = true
				} else if p.APIKey != "" {
					r.findings = append(keyShape(info, "providers."+r.name+".api_key", p.APIKey), r.findings...)
				}
			}
		}
		d.printRow(r)
	}
	var rest []string
	for v := range shapes {
		if !seenShape[v] && len(shapes[v]) > 0 {
			rest = append(rest, v)
		}
	}
	if len(rest) > 0 {
		sort.Strings(rest)
		d.out("\nother variables:\n")
		for _, v := range rest {
			d.printFindings(shapes[v])
		}
	}
	d.finish()
	if d.problems+d.warnings > 0 {
		return 1
	}
	return 0
}

// state checks the shared state store, when state.backend is redis: one
// PING (within 2s), and the server's name and version.
func (d *doctor) state(ctx context.Context, cfg *config.Config) {
	o := cfg.State.RedisOptions()
	if o == nil {
		return
	}
	addr := config.MaskURL(o.URL)
	if copt, err := redisstore.ParseURL(o.URL); err == nil {
		addr = strings.Join(copt.InitAddress, ",")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rtt, server, err := redisstore.Ping(ctx, o)
	if err != nil {
		d.out("\nstate:\n  ✗ redis at %s does not answer (%s): every replica would keep its own state (fallback: local) until it does\n",
			addr, classify.Redact(err.Error()))
		d.problems++
		return
	}
	d.out("\nstate:\n  ✓ redis at %s answers (%s, PING %.2f ms); replicas that name it share breakers and cooldowns\n",
		addr, server, float64(rtt.Microseconds())/1000)
}

func isSim(p *config.Provider) bool {
	info, ok := p.Info()
	return ok && info.Dialect == catalog.DialectSim
}

func (d *doctor) noKeys() {
	var vars []string
	for _, info := range catalog.KnownProviders() {
		if len(info.KeyEnv) > 0 && info.Dialect != catalog.DialectAzure {
			vars = append(vars, info.KeyEnv[0])
		}
	}
	d.out("\n✗ no provider key is set: llmguard would answer with its simulated provider only.\n"+
		"  Set at least one of %s (Azure: AZURE_OPENAI_API_KEY with AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_DEPLOYMENT),\n"+
		"  or name a config file with --config or LLMGUARD_CONFIG.\n"+
		"  MCP clients (Claude Desktop, Cursor, ...) don't read your shell profile: put the key in the server's \"env\" block\n"+
		"  of the client's config, not only in ~/.bashrc or ~/.zshrc.\n", strings.Join(vars, ", "))
	d.problems++
}

func (d *doctor) printShapesOnly(shapes map[string][]finding) {
	vars := make([]string, 0, len(shapes))
	for v := range shapes {
		vars = append(vars, v)
	}
	sort.Strings(vars)
	for _, v := range vars {
		d.printFindings(shapes[v])
	}
}

func (d *doctor) printRow(r row) {
	mark := "✓"
	if !r.ok {
		mark = "✗"
		d.problems++
	}
	key := r.key
	if key == "" {
		key = "no key"
	}
	d.out("  %s %-12s %-32s %-40s %s\n", mark, r.name, key, r.base, r.status)
	d.printFindings(r.findings)
}

func (d *doctor) printFindings(fs []finding) {
	for _, f := range fs {
		mark := "!"
		if f.problem {
			mark = "✗"
			d.problems++
		} else {
			d.warnings++
		}
		d.out("      %s %s\n", mark, f.text)
	}
}

func (d *doctor) finish() {
	switch {
	case d.problems == 0 && d.warnings == 0:
		d.out("\nall good\n")
	default:
		d.out("\n%d problem(s), %d warning(s)\n", d.problems, d.warnings)
	}
}

// dateRecorder remembers the Date header of the last response.
type dateRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	date string
}

func (r *dateRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.date = resp.Header.Get("Date")
		r.mu.Unlock()
	}
	return resp, err
}

func (r *dateRecorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.date
}

// check runs one provider's checks.
func (d *doctor) check(ctx context.Context, name string, p *config.Provider) row {
	r := row{name: name, key: config.MaskKey(p.APIKey), base: config.MaskURL(p.BaseURL)}
	if v := p.KeyVar(); v != "" && r.key != "" {
		r.key += " (" + v + ")"
	}
	info, _ := p.Info()
	if r.base == "" {
		r.base = info.BaseURL
	}
	if isSim(p) {
		r.ok, r.status = true, "simulated provider (no key needed)"
		return r
	}
	rec := &dateRecorder{base: provider.NewTransport(nil)}
	a, err := registry.New(name, p.Settings(), &http.Client{Transport: rec})
	if err != nil {
		r.status = classify.Redact(err.Error())
		return r
	}
	lister, ok := a.(provider.ModelLister)
	if !ok {
		r.ok, r.status = true, "(no model listing for this provider type; key not checked)"
		return r
	}
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	start := d.now()
	models, err := lister.Models(cctx)
	cancel()
	took := d.now().Sub(start).Round(time.Millisecond)
	if err != nil {
		r.status = diagnosis(err)
	} else {
		r.ok = true
		r.status = fmt.Sprintf("key accepted: %d models listed (%v)", len(models), took)
	}
	if d.probe && r.ok {
		pctx, cancel := context.WithTimeout(ctx, d.timeout)
		_, err := a.Chat(pctx, &provider.Request{MaxTokens: 1, Messages: []provider.Message{{Role: provider.RoleUser,
			Content: []provider.Part{{Type: provider.PartText, Text: "ping"}}}}})
		cancel()
		if err != nil {
			r.ok = false
			r.status = "models listed, but a 1-token request to " + p.Model + " failed: " + diagnosis(err)
		} else {
			r.status += "; a 1-token request to " + p.Model + " worked"
		}
	}
	if f, ok := skew(rec.last(), d.now()); ok {
		r.findings = append(r.findings, f)
	}
	return r
}

// diagnosis is the classifier's one line plus its advice.
func diagnosis(err error) string {
	pe := provider.AsError(err)
	if pe == nil {
		return classify.Redact(err.Error())
	}
	v := pe.Verdict
	s := v.Message
	switch v.Class {
	case classify.Network, classify.Timeout:
		if v.Status == 0 {
			s = "base URL unreachable: " + s
		}
	}
	if a := v.Advice(); a != "" {
		s += " → " + a
	}
	return classify.Redact(s)
}

// skew compares a response's Date header with the local clock.
func skew(date string, now time.Time) (finding, bool) {
	if date == "" {
		return finding{}, false
	}
	t, err := http.ParseTime(date)
	if err != nil {
		return finding{}, false
	}
	diff := now.Sub(t)
	abs := diff
	if abs < 0 {
		abs = -abs
	}
	if abs <= maxClockSkew {
		return finding{}, false
	}
	dir := "ahead of"
	if diff < 0 {
		dir = "behind"
	}
	return finding{text: fmt.Sprintf("clock skew: the local clock is %v %s the server's Date header; sync the system clock (NTP) - retry-after dates and quota resets will be misread", abs.Round(time.Second), dir)}, true
}
