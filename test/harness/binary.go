package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binaryRecipe names how Binary builds; changing the recipe changes every key.
const binaryRecipe = "go build ./cmd/llmguard in the module root, v1"

// binaryIdle is how long a cached binary nobody asked for is kept: long
// enough for any test run that uses it, short enough that edits do not
// pile binaries up (the Go build cache keeps the packages, so a rebuild
// after that is a link).
const binaryIdle = time.Hour

var binary struct {
	once sync.Once
	path string
	err  error
}

// Binary returns an llmguard binary built from the module's work tree
// (go build ./cmd/llmguard, with the flags `go vet` compiles with, so that
// after make test's vet it is mostly a link). Every test process asking
// for the same source tree (the files git tracks or would add), Go
// toolchain and Go settings gets the same file: the first builds it in the
// user's cache directory under a file lock, the others wait for that build
// and reuse it, so one `make test` builds llmguard once however many
// packages ask. Run it, never write to it. Safe for concurrent use.
func Binary(t testing.TB) string {
	t.Helper()
	binary.once.Do(func() { binary.path, binary.err = sharedBinary() })
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// sharedBinary finds or builds the binary of the current source tree.
func sharedBinary() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	files, err := sourceFiles(root)
	if err != nil {
		return "", err
	}
	key, err := treeKey(root, files)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	cache = filepath.Join(cache, "llmguard-test-bin")
	dir := filepath.Join(cache, key)
	now := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Chtimes(dir, now, now); err != nil { // in use: not evicted
		return "", err
	}
	unlock, err := lock(filepath.Join(dir, "lock"), true)
	if err != nil {
		return "", err
	}
	defer unlock()
	bin := filepath.Join(dir, "llmguard")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	cmd := exec.Command("go", "build", "-o", bin+".tmp", "./cmd/llmguard")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/llmguard: %v\n%s", err, out)
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		return "", err
	}
	evict(cache, key, now)
	return bin, nil
}

// evict removes the cached binaries of other trees nobody asked for in
// binaryIdle, skipping any whose lock another process holds.
func evict(cache, keep string, now time.Time) {
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || e.Name() == keep || !e.IsDir() || now.Sub(info.ModTime()) < binaryIdle {
			continue
		}
		dir := filepath.Join(cache, e.Name())
		if unlock, err := lock(filepath.Join(dir, "lock"), false); err == nil {
			os.RemoveAll(dir)
			unlock()
		}
	}
}

// lock takes an exclusive flock on path, waiting for it when wait is true.
func lock(path string, wait bool) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// treeKey is a hash of the build recipe, the Go settings that change what
// go build writes, the module root (the binary names its files) and every
// file's path, mode and content.
func treeKey(root string, files []string) (string, error) {
	out, err := exec.Command("go", "env", "GOVERSION", "GOOS", "GOARCH", "GOFLAGS", "CGO_ENABLED",
		"GOEXPERIMENT", "GOAMD64", "GOARM64", "CC").Output()
	if err != nil {
		return "", fmt.Errorf("go env: %v", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", binaryRecipe, out, root)
	for _, f := range files {
		src, err := os.Open(filepath.Join(root, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		info, err := src.Stat()
		if err == nil && info.Mode().IsRegular() {
			fmt.Fprintf(h, "%q %o %d\n", f, info.Mode().Perm(), info.Size())
			_, err = io.Copy(h, src)
		}
		src.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// sourceFiles lists, relative to root, the files git tracks or would add
// (not ignored), else every file but those under .git and node_modules.
func sourceFiles(root string) ([]string, error) {
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output(); err == nil {
		return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"), nil
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.Type().IsRegular():
			rel, err := filepath.Rel(root, p)
			files = append(files, rel)
			return err
		}
		return nil
	})
	return files, err
}

// repoRoot finds the module root (the directory holding go.mod) upwards
// from the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
