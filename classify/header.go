package classify

import (
	"net/http"
	"strings"
)

// Indexes into hdr.v, one per response header the classifier reads.
const (
	hRetryAfter = iota
	hRetryAfterMs
	hShouldRetry
	hResetReq
	hRemainReq
	hResetTok
	hRemainTok
	hAzureResetTok
	hAzureRemainTok
	hAnReqReset
	hAnReqRemain
	hAnTokReset
	hAnTokRemain
	hAnInReset
	hAnInRemain
	hAnOutReset
	hAnOutRemain
	hAmznType
	// request ids, in priority order
	hRequestID
	hXRequestID
	hApimRequestID
	hAmznRequestID
	hAmznRequestID2
	hGenerationID
	hCfRay
	nHdr
)

// hdr holds the first value of each header the classifier reads.
type hdr struct{ v [nHdr]string }

// readHdr indexes h in one pass over its keys, matching names without
// regard to case (so a map built without canonical keys works too).
func readHdr(h http.Header) hdr {
	var x hdr
	if len(h) == 0 {
		return x
	}
	// Canonical forms (as net/http stores them) are compared first; other
	// spellings fall back to a case-insensitive comparison.
	names := [nHdr]string{
		hRetryAfter:     "Retry-After",
		hRetryAfterMs:   "Retry-After-Ms",
		hShouldRetry:    "X-Should-Retry",
		hResetReq:       "X-Ratelimit-Reset-Requests",
		hRemainReq:      "X-Ratelimit-Remaining-Requests",
		hResetTok:       "X-Ratelimit-Reset-Tokens",
		hRemainTok:      "X-Ratelimit-Remaining-Tokens",
		hAzureResetTok:  "X-Rate-Limit-Reset-Tokens",
		hAzureRemainTok: "X-Rate-Limit-Remaining-Tokens",
		hAnReqReset:     "Anthropic-Ratelimit-Requests-Reset",
		hAnReqRemain:    "Anthropic-Ratelimit-Requests-Remaining",
		hAnTokReset:     "Anthropic-Ratelimit-Tokens-Reset",
		hAnTokRemain:    "Anthropic-Ratelimit-Tokens-Remaining",
		hAnInReset:      "Anthropic-Ratelimit-Input-Tokens-Reset",
		hAnInRemain:     "Anthropic-Ratelimit-Input-Tokens-Remaining",
		hAnOutReset:     "Anthropic-Ratelimit-Output-Tokens-Reset",
		hAnOutRemain:    "Anthropic-Ratelimit-Output-Tokens-Remaining",
		hAmznType:       "X-Amzn-Errortype",
		hRequestID:      "Request-Id",
		hXRequestID:     "X-Request-Id",
		hApimRequestID:  "Apim-Request-Id",
		hAmznRequestID:  "X-Amzn-Requestid",
		hAmznRequestID2: "X-Amzn-Request-Id",
		hGenerationID:   "X-Generation-Id",
		hCfRay:          "Cf-Ray",
	}
	for k, vs := range h {
		if len(vs) == 0 {
			continue
		}
		var cand [2]int
		nc := 1
		switch len(k) {
		case 6:
			cand[0] = hCfRay
		case 10:
			cand[0] = hRequestID
		case 11:
			cand[0] = hRetryAfter
		case 12:
			cand[0] = hXRequestID
		case 14:
			cand, nc = [2]int{hRetryAfterMs, hShouldRetry}, 2
		case 15:
			cand, nc = [2]int{hApimRequestID, hGenerationID}, 2
		case 16:
			cand, nc = [2]int{hAmznType, hAmznRequestID}, 2
		case 17:
			cand[0] = hAmznRequestID2
		case 24:
			cand[0] = hResetTok
		case 25:
			cand[0] = hAzureResetTok
		case 26:
			cand[0] = hResetReq
		case 28:
			cand[0] = hRemainTok
		case 29:
			cand[0] = hAzureRemainTok
		case 30:
			cand[0] = hRemainReq
		case 32:
			cand[0] = hAnTokReset
		case 34:
			cand[0] = hAnReqReset
		case 36:
			cand[0] = hAnTokRemain
		case 38:
			cand, nc = [2]int{hAnReqRemain, hAnInReset}, 2
		case 39:
			cand[0] = hAnOutReset
		case 42:
			cand[0] = hAnInRemain
		case 43:
			cand[0] = hAnOutRemain
		default:
			continue
		}
		for _, i := range cand[:nc] {
			if n := names[i]; n == k || strings.EqualFold(n, k) {
				x.v[i] = vs[0]
				break
			}
		}
	}
	return x
}
