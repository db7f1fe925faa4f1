package config

import (
	"os"
	"testing"
)

func BenchmarkParseFull(b *testing.B) {
	data, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		b.Fatal(err)
	}
	env := envFunc(fullEnv)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("full.yaml", data, env); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTargetPolicy(b *testing.B) {
	c, err := Load("testdata/full.yaml", envFunc(fullEnv))
	if err != nil {
		b.Fatal(err)
	}
	r := c.Routes["cheap"]
	b.ReportAllocs()
	for b.Loop() {
		_ = r.TargetPolicy(1)
	}
}

func BenchmarkPrice(b *testing.B) {
	c, err := Load("testdata/full.yaml", envFunc(fullEnv))
	if err != nil {
		b.Fatal(err)
	}
	cat := c.Catalog()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := cat.Price("anthropic", "claude-sonnet-4-5-20250929"); !ok {
			b.Fatal("no price")
		}
	}
}
