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

// hdrNames are the canonical forms (as net/http stores them) of the
// headers the classifier reads, by index.
var hdrNames = [nHdr]string{
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

// hdrByLen lists, for each name length, the indexes of hdrNames of that
// length (at most two), so a header key is compared with one or two names.
var hdrByLen = func() (idx [44][]int) {
	for i, n := range hdrNames {
		idx[len(n)] = append(idx[len(n)], i)
	}
	return idx
}()

// readHdr indexes h in one pass over its keys, matching names without
// regard to case (so a map built without canonical keys works too).
func readHdr(h http.Header) hdr {
	var x hdr
	for k, vs := range h {
		if len(vs) == 0 || len(k) >= len(hdrByLen) {
			continue
		}
		// The canonical form is compared first; other spellings fall back
		// to a case-insensitive comparison.
		for _, i := range hdrByLen[len(k)] {
			if n := hdrNames[i]; n == k || strings.EqualFold(n, k) {
				x.v[i] = vs[0]
				break
			}
		}
	}
	return x
}
