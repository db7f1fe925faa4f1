package version

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	settings := []debug.BuildSetting{{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"}, {Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"}}
	tests := []struct {
		name        string
		bi          *debug.BuildInfo
		short, line string
	}{
		{"release", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: Module, Version: "v1.2.0"}},
			"v1.2.0", "llmguard v1.2.0 go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH},
		{"checkout with changes", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: Module, Version: "(devel)"}, Settings: settings},
			"devel-1a2b3c4d5e6f-dirty", "llmguard devel-1a2b3c4d5e6f-dirty (rev 1a2b3c4d5e6f, modified, 2026-12-01T10:00:00Z) go1.26.0 linux/arm64"},
		{"pseudo-version", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: Module, Version: "v0.0.0-20261201100000-1a2b3c4d5e6f+dirty"}, Settings: settings[:1]},
			"v0.0.0-20261201100000-1a2b3c4d5e6f+dirty", "llmguard v0.0.0-20261201100000-1a2b3c4d5e6f+dirty (rev 1a2b3c4d5e6f) go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH},
		{"library in another program", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "example.com/app", Version: "v3.0.0"},
			Deps: []*debug.Module{{Path: Module, Version: "v1.4.0"}}}, "v1.4.0", "llmguard v1.4.0 go1.26.1 " + runtime.GOOS + "/" + runtime.GOARCH},
		{"no build info", nil, "devel", "llmguard devel " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := FromBuildInfo(tt.bi)
			if got := i.Short(); got != tt.short {
				t.Errorf("Short = %q, want %q", got, tt.short)
			}
			if got := i.String(); got != tt.line {
				t.Errorf("String = %q\nwant     %q", got, tt.line)
			}
		})
	}
}
