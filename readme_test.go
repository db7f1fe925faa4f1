//go:build unix

package llmguard_test

// TestREADME runs every command example of README.md as written, on a copy
// of the tracked files (what a fresh clone has), with llmguard as built for
// this run's tests (harness.Binary) first on PATH and no provider keys in
// the environment.
//
// The convention, for whoever edits the README:
//
//   - A ```sh (or bash, shell) block is a script: it runs with bash -euo
//     pipefail from the root of the copy and must exit 0.
//   - A ```console block holds "$ " commands (a line ending in "\" goes
//     on), each followed by its output. The output must match: stdout and
//     stderr together, trailing spaces ignored, a line "..." standing for
//     any number of lines ("..." inside a line: any text). A command exits 0 unless it carries the comment
//     "# exit N".
//   - An HTML comment right above a block (blank lines between are fine)
//     marks it:
//     <!-- not run: REASON --> skips the whole block;
//     <!-- not run "CMD": REASON --> skips the block's commands starting with CMD;
//     <!-- file: PATH --> the block is exactly the file at PATH;
//     <!-- excerpt: PATH --> the block's lines appear, in order, in PATH.
//     Only commands that need a network, another program or an unbounded
//     run are marked not run, each with its reason.
//   - Blocks in other languages (yaml, json, go, none) are not run.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/test/harness"
)

// block is one fenced block of the README.
type block struct {
	line  int // of the opening fence, 1-based
	lang  string
	lines []string
	marks []string // the HTML comments right above it
}

var fenceRE = regexp.MustCompile("^```([a-z]*)\\s*$")

func parseBlocks(md string) ([]block, error) {
	lines := strings.Split(md, "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := block{line: i + 1, lang: m[1]}
		for j := i - 1; j >= 0; j-- {
			l := strings.TrimSpace(lines[j])
			if l == "" {
				continue
			}
			if !strings.HasPrefix(l, "<!--") || !strings.HasSuffix(l, "-->") {
				break
			}
			b.marks = append(b.marks, strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "<!--"), "-->")))
		}
		j := i + 1
		for ; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
			b.lines = append(b.lines, lines[j])
		}
		if j == len(lines) {
			return nil, fmt.Errorf("README.md:%d: block never closed", b.line)
		}
		out = append(out, b)
		i = j
	}
	return out, nil
}

// skip is a "not run" mark: Cmd "" is the whole block.
type skip struct {
	cmd, reason string
	used        bool
}

var notRunRE = regexp.MustCompile(`^not run(?: "([^"]+)")?:\s*(.*)$`)

// plan reads a block's marks.
func (b *block) plan() (skips []*skip, file, excerpt string, err error) {
	for _, m := range b.marks {
		switch {
		case strings.HasPrefix(m, "file:"):
			file = strings.TrimSpace(strings.TrimPrefix(m, "file:"))
		case strings.HasPrefix(m, "excerpt:"):
			excerpt = strings.TrimSpace(strings.TrimPrefix(m, "excerpt:"))
		case strings.HasPrefix(m, "not run"):
			sm := notRunRE.FindStringSubmatch(m)
			if sm == nil || len(strings.TrimSpace(sm[2])) < 10 {
				return nil, "", "", fmt.Errorf("README.md:%d: %q: say why it is not run (<!-- not run: REASON -->)", b.line, m)
			}
			skips = append(skips, &skip{cmd: sm[1], reason: sm[2]})
		}
	}
	return skips, file, excerpt, nil
}

func skipped(cmd string, skips []*skip) *skip {
	for _, s := range skips {
		if s.cmd == "" || strings.HasPrefix(strings.TrimSpace(cmd), s.cmd) {
			s.used = true
			return s
		}
	}
	return nil
}

// command is one "$ " command of a console block and its expected output.
type command struct {
	text string
	want []string
	exit int
}

var exitRE = regexp.MustCompile(`#.*\bexit (\d+)`)

func consoleCommands(lines []string) []command {
	var out []command
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "$ ") {
			continue
		}
		c := command{text: strings.TrimPrefix(lines[i], "$ ")}
		for strings.HasSuffix(c.text, "\\") && i+1 < len(lines) {
			i++
			c.text += "\n" + lines[i]
		}
		for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "$ ") {
			i++
			c.want = append(c.want, strings.TrimRight(lines[i], " \t"))
		}
		for len(c.want) > 0 && c.want[len(c.want)-1] == "" {
			c.want = c.want[:len(c.want)-1]
		}
		if m := exitRE.FindStringSubmatch(c.text); m != nil {
			fmt.Sscan(m[1], &c.exit)
		}
		out = append(out, c)
	}
	return out
}

// matchLines matches got against want, where a want line "..." stands for
// any number of lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && lineMatch(want[0], got[0]) && matchLines(want[1:], got[1:])
}

// lineMatch compares one line; "..." inside it stands for any text.
func lineMatch(want, got string) bool {
	if !strings.Contains(want, "...") {
		return want == got
	}
	parts := strings.Split(want, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got)
}

// inOrder reports whether every non-blank line of part appears in whole,
// in order, comparing lines without their indentation.
func inOrder(part, whole []string) bool {
	j := 0
	for _, p := range part {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		for j < len(whole) && strings.TrimSpace(whole[j]) != p {
			j++
		}
		if j == len(whole) {
			return false
		}
		j++
	}
	return true
}

// copyTree copies the files a clone has to dst: those git tracks (added
// to the index counts), else every file but .git and node_modules.
func copyTree(t *testing.T, dst string) {
	t.Helper()
	var files []string
	if out, err := exec.Command("git", "ls-files", "-z").Output(); err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" && !strings.Contains(f, "node_modules/") {
				files = append(files, f)
			}
		}
	} else {
		err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		src, err := os.Open(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		info, _ := src.Stat()
		if info.IsDir() {
			src.Close()
			continue
		}
		target := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(out, src)
		src.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// cleanEnv is the test's environment without provider keys, base URLs,
// models or llmguard settings, with bin first on PATH, and -trimpath for the
// go commands, so builds in the copy reuse the build cache (without it the
// copy's directory is part of every package's cache key).
func cleanEnv(bin string) []string {
	env := []string{"GOFLAGS=-trimpath " + goEnv("GOFLAGS")}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "GOFLAGS":
			continue
		case k == "PATH":
			kv = "PATH=" + bin + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		case strings.HasPrefix(k, "LLMGUARD_"), strings.HasSuffix(k, "_API_KEY"), strings.HasSuffix(k, "_BASE_URL"),
			strings.HasSuffix(k, "_MODEL"), strings.HasPrefix(k, "AZURE_OPENAI_"):
			continue
		}
		env = append(env, kv)
	}
	return env
}

// goEnv is a go env setting (from the environment or go env -w).
func goEnv(key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// run runs script with bash in dir, in a process group of its own that is
// killed when the script ends or after 2 minutes, so nothing it started
// outlives it; out is stdout and stderr together.
func run(dir string, env []string, script string) (out string, code int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, append(env, readmeRunning+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A file, not a pipe: Run returns when bash exits even if something it
	// started in the background still holds the output open.
	f, err := os.CreateTemp("", "readme-out-*")
	if err != nil {
		return "", -1, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever it left running
	}
	b, rerr := os.ReadFile(f.Name())
	if rerr != nil {
		return "", -1, rerr
	}
	if ctx.Err() != nil {
		return string(b), -1, fmt.Errorf("still running after 2 minutes")
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(b), ee.ExitCode(), nil
	}
	return string(b), 0, err
}

// readmeRunning is set in the commands' environment, so a README command
// that runs the tests (make test) cannot run this test again.
const readmeRunning = "LLMGUARD_README_TEST"

func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds llmguard and runs the README's commands")
	}
	if os.Getenv(readmeRunning) != "" {
		t.Skip("run by a README command: no recursion")
	}
	md, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(string(md))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyTree(t, dir)
	bin := filepath.Join(t.TempDir(), "bin")
	env := cleanEnv(bin)
	// A copy of the binary the test packages share (harness.Binary), so
	// nothing a README command does can touch theirs.
	exe, err := os.ReadFile(harness.Binary(t))
	if err == nil {
		if err = os.Mkdir(bin, 0o755); err == nil {
			err = os.WriteFile(filepath.Join(bin, "llmguard"), exe, 0o755)
		}
	}
	if err != nil {
		t.Fatal(err)
	}

	ran := 0
	for _, b := range blocks {
		skips, file, excerpt, err := b.plan()
		if err != nil {
			t.Error(err)
			continue
		}
		where := fmt.Sprintf("README.md:%d", b.line)
		if file != "" {
			data, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Errorf("%s: %v", where, err)
			} else if got, want := strings.TrimRight(string(data), "\n"), strings.Join(b.lines, "\n"); got != want {
				t.Errorf("%s: the block is not %s as it is (update one of them):\nREADME:\n%s\nfile:\n%s", where, file, want, got)
			}
		}
		if excerpt != "" {
			data, err := os.ReadFile(filepath.Join(dir, excerpt))
			if err != nil {
				t.Errorf("%s: %v", where, err)
			} else if !inOrder(b.lines, strings.Split(string(data), "\n")) {
				t.Errorf("%s: the block's lines are not, in order, in %s", where, excerpt)
			}
		}
		switch b.lang {
		case "sh", "bash", "shell":
			var script []string
			for i := 0; i < len(b.lines); i++ {
				l := b.lines[i]
				if s := skipped(l, skips); s != nil && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
					t.Logf("%s: not run: %s (%s)", where, strings.TrimSpace(l), s.reason)
					for strings.HasSuffix(b.lines[i], "\\") && i+1 < len(b.lines) {
						i++
					}
					continue
				}
				script = append(script, l)
			}
			if strings.TrimSpace(stripComments(script)) == "" {
				break
			}
			ran++
			out, code, err := run(dir, env, strings.Join(script, "\n"))
			if err != nil || code != 0 {
				t.Errorf("%s: exit %d %v:\n%s\noutput:\n%s\n%s", where, code, err, strings.Join(script, "\n"), out, markHint)
			}
		case "console":
			for _, c := range consoleCommands(b.lines) {
				if s := skipped(c.text, skips); s != nil {
					t.Logf("%s: not run: %s (%s)", where, c.text, s.reason)
					continue
				}
				ran++
				out, code, err := run(dir, env, c.text)
				got := strings.Split(strings.TrimRight(out, "\n"), "\n")
				for i := range got {
					got[i] = strings.TrimRight(got[i], " \t")
				}
				if out == "" {
					got = nil
				}
				if err != nil || code != c.exit {
					t.Errorf("%s: $ %s: exit %d (want %d) %v\n%s\n%s", where, c.text, code, c.exit, err, out, markHint)
				} else if !matchLines(c.want, got) {
					t.Errorf("%s: $ %s: output differs\nREADME:\n%s\ngot:\n%s", where, c.text, strings.Join(c.want, "\n"), strings.Join(got, "\n"))
				}
			}
		}
		for _, s := range skips {
			if !s.used && (b.lang == "sh" || b.lang == "bash" || b.lang == "shell" || b.lang == "console") {
				t.Errorf("%s: mark \"not run %q\" matches no command of the block", where, s.cmd)
			}
		}
	}
	if ran == 0 {
		t.Error("no README command ran")
	}
	t.Logf("%d README commands ran", ran)
}

// markHint is how to fix a README block that cannot run here.
const markHint = "(a command that needs a network, another program or runs until stopped gets <!-- not run: REASON --> above its block; see readme_test.go)"

func stripComments(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(t)
		}
	}
	return b.String()
}

func TestConsoleParsing(t *testing.T) {
	lines := strings.Split(`$ echo a \
    b   # exit 3
a b

$ true
$ printf 'x\ny\nz\n'
x
...
z
`, "\n")
	cs := consoleCommands(lines)
	if len(cs) != 3 || cs[0].text != "echo a \\\n    b   # exit 3" || cs[0].exit != 3 || strings.Join(cs[0].want, "|") != "a b" ||
		len(cs[1].want) != 0 || strings.Join(cs[2].want, "|") != "x|...|z" {
		t.Fatalf("parsed %+v", cs)
	}
	for _, tt := range []struct {
		want, got string
		ok        bool
	}{
		{"x|...|z", "x|y|w|z", true}, {"x|...|z", "x|z", true}, {"x|...", "x", true}, {"x|y", "x", false}, {"...|q", "x|y", false},
		{"a ... go1...", "a v1.2 go1.26.8 linux/amd64", true}, {"a ... go1...", "b go1.26", false}, {"a.b", "axb", false},
	} {
		if got := matchLines(strings.Split(tt.want, "|"), strings.Split(tt.got, "|")); got != tt.ok {
			t.Errorf("matchLines(%s, %s) = %v", tt.want, tt.got, got)
		}
	}
}

// TestExamples checks each file under examples/ for what it is.
func TestExamples(t *testing.T) {
	if _, err := config.Load("examples/mock.yaml", func(string) string { return "" }); err != nil {
		t.Errorf("examples/mock.yaml must pass with no keys: %v", err)
	}
	keys := map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "DEEPSEEK_API_KEY": "k", "GEMINI_API_KEY": "k"}
	if _, err := config.Load("examples/llmguard.yaml", func(k string) string { return keys[k] }); err != nil {
		t.Errorf("examples/llmguard.yaml with its four keys: %v", err)
	}
	if _, err := config.Load("examples/replicas/llmguard.yaml", func(k string) string {
		return map[string]string{"ANTHROPIC_API_KEY": "k", "REDIS_URL": "redis://redis:6379"}[k]
	}); err != nil {
		t.Errorf("examples/replicas/llmguard.yaml: %v", err)
	}
	if _, err := mock.LoadScenario("examples/incident.yaml"); err != nil {
		t.Errorf("examples/incident.yaml: %v", err)
	}
	for _, f := range []string{"examples/req.json", "examples/quota.json"} {
		if b, err := os.ReadFile(f); err != nil || !json.Valid(b) {
			t.Errorf("%s: not JSON (%v)", f, err)
		}
	}
}

// A README command cannot leave a process behind (a server started in the
// background, a make test it spawned).
func TestRunKillsWhatItStarted(t *testing.T) {
	out, code, err := run(t.TempDir(), os.Environ(), "sleep 60 & echo $!")
	if err != nil || code != 0 {
		t.Fatalf("run: %d %v %s", code, err, out)
	}
	var pid int
	if _, err := fmt.Sscan(out, &pid); err != nil {
		t.Fatalf("no pid in %q", out)
	}
	alive := func() bool { // a zombie is dead (this container's init may not reap it)
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return syscall.Kill(pid, 0) == nil
		}
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		return len(f) > 0 && f[0] != "Z" && f[0] != "X"
	}
	for deadline := time.Now().Add(5 * time.Second); alive(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("background process %d still running after the command ended", pid)
		}
	}
}
