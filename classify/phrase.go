package classify

import (
	"strings"
	"time"
)

// phrases is a bit set of the message phrases the classifier cares about.
type phrases uint32

// The phrase groups scanPhrases reports.
const (
	phTooLarge   phrases = 1 << iota // "request too large", "payload too large", ...
	phContext                        // "prompt is too long", "context length", ...
	phQuota                          // "credit balance is too low", "insufficient balance", ...
	phLimitZero                      // Gemini "limit: 0"
	phAuth                           // "incorrect api key", "api key not valid", ...
	phRateText                       // "rate limit", "per minute"
	phOverload                       // "overloaded", "high demand", "capacity exceeded", ...
	phUpstreamRL                     // "temporarily rate-limited" (OpenRouter upstream)
	phRegion                         // "location is not supported", "is not allowed to use"
	phContent                        // "flagged", "content management policy", ...
	phModel                          // "model", "deployment"
	phTPM                            // "tokens per minute", "(tpm)", "tokens per day"
)

// scanPhrases finds the known phrases in msg (whitespace already
// collapsed) in one pass: at every word start it compares, ignoring ASCII
// case, only the phrases that begin with that word's first two letters. This keeps message matching well under a microsecond for a
// typical 300-byte error.
//
// It also returns the largest delay written in the message ("Please try
// again in 1.2s", "Please retry in 36.4s", "retry after 60 seconds").
func scanPhrases(msg string) (phrases, time.Duration) {
	var m phrases
	var wait time.Duration
	waitAfter := func(s, p string) {
		if len(s) > len(p) && lower(s[2]) == p[2] && hasPrefixFold(s, p) {
			if d, ok := leadingDuration(s[len(p):]); ok && d > wait {
				wait = d
			}
		}
	}
	has := func(s, p string, bit phrases) {
		// The first two letters matched already; check the third before
		// comparing the whole phrase.
		if m&bit == 0 && len(s) >= len(p) && lower(s[2]) == p[2] && hasPrefixFold(s, p) {
			m |= bit
		}
	}
	for i := 0; i+1 < len(msg); {
		// Visit word starts only: position 0 and each byte after a space
		// (the message has been collapsed, so spaces are the only
		// separators), skipping opening quotes and markup.
		s := msg[i:]
		if j := strings.IndexByte(s, ' '); j >= 0 {
			i += j + 1
		} else {
			i = len(msg)
		}
		for len(s) > 1 && (s[0] == '"' || s[0] == '\'' || s[0] == '`' || s[0] == '*' || s[0] == '[') {
			s = s[1:]
		}
		if len(s) < 2 {
			continue
		}
		switch uint16(lower(s[0]))<<8 | uint16(lower(s[1])) {
		case 'a'<<8 | 'p':
			has(s, "api usage limits", phQuota)
			has(s, "api key not valid", phAuth)
			has(s, "api key expired", phAuth)
		case 'a'<<8 | 'u':
			has(s, "authentication fails", phAuth)
		case 'a'<<8 | 't':
			has(s, "at capacity", phOverload)
		case 'c'<<8 | 'r':
			has(s, "credit balance is too low", phQuota)
		case 'c'<<8 | 'a':
			has(s, "can only afford", phQuota)
			has(s, "capacity exceeded", phOverload)
		case 'c'<<8 | 'o':
			has(s, "context length", phContext)
			has(s, "context window", phContext)
			has(s, "context_length_exceeded", phContext)
			has(s, "content management policy", phContent)
			has(s, "content filter", phContent)
		case 'd'<<8 | 'e':
			has(s, "deployment", phModel)
		case 'e'<<8 | 'x':
			has(s, "exceeds the maximum number of tokens allowed", phContext)
			has(s, "exceed context limit", phContext)
		case 'f'<<8 | 'r':
			has(s, "free-models-per-day", phQuota)
		case 'f'<<8 | 'l':
			has(s, "flagged", phContent)
		case 'h'<<8 | 'i':
			has(s, "high demand", phOverload)
		case 'i'<<8 | 'n':
			if len(s) < 6 {
				break
			}
			has(s, "insufficient balance", phQuota)
			has(s, "insufficient credits", phQuota)
			has(s, "insufficient_quota", phQuota)
			has(s, "input token count", phContext)
			has(s, "input is too long", phContext)
			has(s, "incorrect api key", phAuth)
			has(s, "invalid api key", phAuth)
			has(s, "invalid x-api-key", phAuth)
			has(s, "invalid subscription key", phAuth)
			has(s, "invalid authentication", phAuth)
		case 'i'<<8 | 's':
			has(s, "is not allowed to use", phRegion)
		case 'l'<<8 | 'i':
			if m&phLimitZero == 0 && hasPrefixFold(s, "limit: 0") && (len(s) == 8 || !isDigit(s[8])) {
				m |= phLimitZero
			}
		case 'l'<<8 | 'o':
			has(s, "location is not supported", phRegion)
		case 'm'<<8 | 'o':
			has(s, "monthly spending limit", phQuota)
			has(s, "model", phModel)
		case 'n'<<8 | 'o':
			has(s, "no auth credentials", phAuth)
			has(s, "no capacity available", phOverload)
			has(s, "not available in your country", phRegion)
		case 'o'<<8 | 'u':
			has(s, "out of credits", phQuota)
		case 'o'<<8 | 'v':
			has(s, "overloaded", phOverload)
		case 'p'<<8 | 'r':
			has(s, "prompt is too long", phContext)
			has(s, "prepayment credits are depleted", phQuota)
		case 'p'<<8 | 'a':
			has(s, "payload too large", phTooLarge)
		case 'p'<<8 | 'e':
			has(s, "per minute", phRateText)
		case 'r'<<8 | 'e':
			has(s, "request too large", phTooLarge)
			has(s, "request entity too large", phTooLarge)
			has(s, "reduce your message size", phTooLarge)
			has(s, "requires more credits", phQuota)
			has(s, "reset reason: overflow", phOverload)
			waitAfter(s, "retry in ")
			waitAfter(s, "retry after ")
			waitAfter(s, "retry-after ")
		case 'r'<<8 | 'a':
			has(s, "rate limit", phRateText)
		case 's'<<8 | 'a':
			has(s, "safety system", phContent)
		case 't'<<8 | 'o':
			has(s, "too many tokens in the prompt", phContext)
			has(s, "tokens per minute", phTPM)
			has(s, "tokens per day", phTPM)
		case 't'<<8 | 'e':
			has(s, "temporarily rate-limited", phUpstreamRL)
		case 't'<<8 | 'r':
			waitAfter(s, "try again in ")
		case 'u'<<8 | 's':
			has(s, "used all available credits", phQuota)
		case 'u'<<8 | 'n':
			has(s, "unregistered callers", phAuth)
		case 'w'<<8 | 'a':
			waitAfter(s, "wait ")
		case 'y'<<8 | 'o':
			has(s, "you have been rate limited", phRateText)
		case '('<<8 | 't':
			has(s, "(tpm)", phTPM)
		}
	}
	return m, wait
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
