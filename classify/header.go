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
	names := [nHdr]string{
		hRetryAfter:     "retry-after",
		hRetryAfterMs:   "retry-after-ms",
		hShouldRetry:    "x-should-retry",
		hResetReq:       "x-ratelimit-reset-requests",
		hRemainReq:      "x-ratelimit-remaining-requests",
		hResetTok:       "x-ratelimit-reset-tokens",
		hRemainTok:      "x-ratelimit-remaining-tokens",
		hAzureResetTok:  "x-rate-limit-reset-tokens",
		hAzureRemainTok: "x-rate-limit-remaining-tokens",
		hAnReqReset:     "anthropic-ratelimit-requests-reset",
		hAnReqRemain:    "anthropic-ratelimit-requests-remaining",
		hAnTokReset:     "anthropic-ratelimit-tokens-reset",
		hAnTokRemain:    "anthropic-ratelimit-tokens-remaining",
		hAnInReset:      "anthropic-ratelimit-input-tokens-reset",
		hAnInRemain:     "anthropic-ratelimit-input-tokens-remaining",
		hAnOutReset:     "anthropic-ratelimit-output-tokens-reset",
		hAnOutRemain:    "anthropic-ratelimit-output-tokens-remaining",
		hAmznType:       "x-amzn-errortype",
		hRequestID:      "request-id",
		hXRequestID:     "x-request-id",
		hApimRequestID:  "apim-request-id",
		hAmznRequestID:  "x-amzn-requestid",
		hAmznRequestID2: "x-amzn-request-id",
		hGenerationID:   "x-generation-id",
		hCfRay:          "cf-ray",
	}
	for k, vs := range h {
		if len(vs) == 0 {
			continue
		}
		for i, n := range names {
			if len(n) == len(k) && strings.EqualFold(n, k) {
				x.v[i] = vs[0]
				break
			}
		}
	}
	return x
}
