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

// A phrase is one text the message scan looks for, ASCII case ignored.
type phrase struct {
	text string
	bit  phrases    // the group it belongs to (phraseHas and phraseLimitZero)
	kind phraseKind // what a match means
}

type phraseKind uint8

const (
	phraseHas       phraseKind = iota // the message has the phrase: set bit
	phraseWait                        // a delay follows the phrase ("retry in 1.2s")
	phraseLimitZero                   // "limit: 0", not followed by another digit
)

// phraseList is every phrase scanPhrases knows (a data table).
var phraseList = [...]phrase{
	{"api usage limits", phQuota, phraseHas},
	{"api key not valid", phAuth, phraseHas},
	{"api key expired", phAuth, phraseHas},
	{"authentication fails", phAuth, phraseHas},
	{"at capacity", phOverload, phraseHas},
	{"credit balance is too low", phQuota, phraseHas},
	{"can only afford", phQuota, phraseHas},
	{"capacity exceeded", phOverload, phraseHas},
	{"context length", phContext, phraseHas},
	{"context window", phContext, phraseHas},
	{"context_length_exceeded", phContext, phraseHas},
	{"content management policy", phContent, phraseHas},
	{"content filter", phContent, phraseHas},
	{"deployment", phModel, phraseHas},
	{"exceeds the maximum number of tokens allowed", phContext, phraseHas},
	{"exceed context limit", phContext, phraseHas},
	{"free-models-per-day", phQuota, phraseHas},
	{"flagged", phContent, phraseHas},
	{"high demand", phOverload, phraseHas},
	{"insufficient balance", phQuota, phraseHas},
	{"insufficient credits", phQuota, phraseHas},
	{"insufficient_quota", phQuota, phraseHas},
	{"input token count", phContext, phraseHas},
	{"input is too long", phContext, phraseHas},
	{"incorrect api key", phAuth, phraseHas},
	{"invalid api key", phAuth, phraseHas},
	{"invalid x-api-key", phAuth, phraseHas},
	{"invalid subscription key", phAuth, phraseHas},
	{"invalid authentication", phAuth, phraseHas},
	{"is not allowed to use", phRegion, phraseHas},
	{"limit: 0", phLimitZero, phraseLimitZero},
	{"location is not supported", phRegion, phraseHas},
	{"monthly spending limit", phQuota, phraseHas},
	{"model", phModel, phraseHas},
	{"no auth credentials", phAuth, phraseHas},
	{"no capacity available", phOverload, phraseHas},
	{"not available in your country", phRegion, phraseHas},
	{"out of credits", phQuota, phraseHas},
	{"overloaded", phOverload, phraseHas},
	{"prompt is too long", phContext, phraseHas},
	{"prepayment credits are depleted", phQuota, phraseHas},
	{"payload too large", phTooLarge, phraseHas},
	{"per minute", phRateText, phraseHas},
	{"request too large", phTooLarge, phraseHas},
	{"request entity too large", phTooLarge, phraseHas},
	{"reduce your message size", phTooLarge, phraseHas},
	{"requires more credits", phQuota, phraseHas},
	{"reset reason: overflow", phOverload, phraseHas},
	{"retry in ", 0, phraseWait},
	{"retry after ", 0, phraseWait},
	{"retry-after ", 0, phraseWait},
	{"rate limit", phRateText, phraseHas},
	{"safety system", phContent, phraseHas},
	{"too many tokens in the prompt", phContext, phraseHas},
	{"tokens per minute", phTPM, phraseHas},
	{"tokens per day", phTPM, phraseHas},
	{"temporarily rate-limited", phUpstreamRL, phraseHas},
	{"try again in ", 0, phraseWait},
	{"used all available credits", phQuota, phraseHas},
	{"unregistered callers", phAuth, phraseHas},
	{"wait ", 0, phraseWait},
	{"you have been rate limited", phRateText, phraseHas},
	{"(tpm)", phTPM, phraseHas},
}

// phrasesByFirst indexes phraseList by first byte, so the scan compares
// at each word start only the few phrases that begin with its letter.
var phrasesByFirst = func() (idx [128][]phrase) {
	for _, p := range phraseList {
		idx[p.text[0]] = append(idx[p.text[0]], p)
	}
	return idx
}()

// scanPhrases finds the known phrases (phraseList) in msg (whitespace
// already collapsed) in one pass: at every word start it compares,
// ignoring ASCII case, only the phrases that begin with that word's first
// two letters. This keeps message matching well under a microsecond for a
// typical 300-byte error.
//
// It also returns the largest delay written in the message ("Please try
// again in 1.2s", "Please retry in 36.4s", "retry after 60 seconds").
func scanPhrases(msg string) (phrases, time.Duration) {
	var m phrases
	var wait time.Duration
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
		if len(s) < 2 || s[0] >= 128 {
			continue
		}
		for _, p := range phrasesByFirst[lower(s[0])] {
			if lower(s[1]) != p.text[1] || len(s) < len(p.text) || lower(s[2]) != p.text[2] {
				continue
			}
			m, wait = p.match(s, m, wait)
		}
	}
	return m, wait
}

// match applies p to s, a word start whose first three letters match p:
// the phrase groups found so far and the largest delay are updated.
func (p *phrase) match(s string, m phrases, wait time.Duration) (phrases, time.Duration) {
	switch p.kind {
	case phraseHas:
		if m&p.bit == 0 && hasPrefixFold(s, p.text) {
			m |= p.bit
		}
	case phraseWait:
		if len(s) > len(p.text) && hasPrefixFold(s, p.text) {
			if d, ok := leadingDuration(s[len(p.text):]); ok && d > wait {
				wait = d
			}
		}
	case phraseLimitZero:
		if m&p.bit == 0 && hasPrefixFold(s, p.text) && (len(s) == len(p.text) || !isDigit(s[len(p.text)])) {
			m |= p.bit
		}
	}
	return m, wait
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
