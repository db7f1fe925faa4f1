package telemetry

import "github.com/llmguard/llmguard/provider"

func usage(in, out int) provider.Usage { return provider.Usage{InputTokens: in, OutputTokens: out} }
