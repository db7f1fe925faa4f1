// Package version reports which llmguard this is, from the build
// information the Go toolchain embeds in every binary (runtime/debug): the
// module version, the VCS revision and time, whether the tree had
// uncommitted changes, and the Go version.
//
//	fmt.Println(version.Get()) // llmguard v1.2.0 (rev 1a2b3c4d5e6f, 2026-12-01T10:00:00Z) go1.26.0 linux/amd64
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Module is llmguard's module path.
const Module = "github.com/llmguard/llmguard"

// Info is one build's identity. The zero value is an unknown build.
type Info struct {
	// Version is the module version ("v1.2.0", a pseudo-version, or
	// "(devel)" for a build whose version the toolchain did not know).
	Version string
	// Revision and Time are the VCS commit and its time ("" when unknown).
	Revision, Time string
	// Modified reports uncommitted changes in the tree that was built.
	Modified bool
	// Go is the toolchain version ("go1.26.0"); Platform is GOOS/GOARCH.
	Go, Platform string
}

// Get returns the running binary's Info. Safe for concurrent use.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return FromBuildInfo(bi)
}

// FromBuildInfo extracts llmguard's Info from bi: the main module's when
// llmguard is the program, else the dependency's (llmguard used as a
// library). bi may be nil.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	i := Info{Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return i
	}
	if bi.GoVersion != "" {
		i.Go = bi.GoVersion
	}
	switch {
	case bi.Main.Path == Module:
		i.Version = bi.Main.Version
	default:
		for _, d := range bi.Deps {
			if d.Path == Module {
				if d.Replace != nil {
					d = d.Replace
				}
				i.Version = d.Version
			}
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.time":
			i.Time = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		case "GOOS":
			i.Platform = s.Value + i.Platform[strings.IndexByte(i.Platform, '/'):]
		case "GOARCH":
			i.Platform = i.Platform[:strings.IndexByte(i.Platform, '/')+1] + s.Value
		}
	}
	return i
}

// Short is the version alone, as MCP's serverInfo.version carries it: the
// module version when it is known, else "devel" with the revision's first
// 12 characters and "-dirty" for a modified tree ("devel-1a2b3c4d5e6f-dirty").
func (i Info) Short() string {
	if i.Version != "" && i.Version != "(devel)" {
		return i.Version
	}
	s := "devel"
	if i.Revision != "" {
		s += "-" + shortRev(i.Revision)
		if i.Modified {
			s += "-dirty"
		}
	}
	return s
}

// String is one line: "llmguard VERSION (rev REV[, modified], TIME) GO PLATFORM",
// leaving out what is unknown.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString("llmguard ")
	b.WriteString(i.Short())
	if i.Revision != "" {
		b.WriteString(" (rev ")
		b.WriteString(shortRev(i.Revision))
		if i.Modified {
			b.WriteString(", modified")
		}
		if i.Time != "" {
			b.WriteString(", ")
			b.WriteString(i.Time)
		}
		b.WriteString(")")
	}
	b.WriteString(" ")
	b.WriteString(i.Go)
	b.WriteString(" ")
	b.WriteString(i.Platform)
	return b.String()
}

func shortRev(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}
