package harness

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const binaryChild = "HARNESS_BINARY_CHILD"

// Two test processes asking for the binary of one source tree share one
// build: the second gets the first's file, not a build of its own.
func TestBinaryShared(t *testing.T) {
	if testing.Short() {
		t.Skip("builds llmguard")
	}
	if os.Getenv(binaryChild) != "" {
		os.Stdout.WriteString("binary: " + Binary(t) + "\n")
		return
	}
	path := Binary(t)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBinaryShared$", "-test.count=1")
	cmd.Env = append(os.Environ(), binaryChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var got string
	for _, l := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(l, "binary: "); ok {
			got = p
		}
	}
	if got != path {
		t.Fatalf("the second process got %q, want the first's %q\n%s", got, path, out)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("%s was built again by the second process", path)
	}
}
