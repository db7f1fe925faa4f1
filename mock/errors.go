package mock

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"
)

// Dialects: the wire format a request was made in.
const (
	dialectAnthropic = "anthropic"
	dialectOpenAI    = "openai"
	dialectAzure     = "azure"
	dialectGemini    = "gemini"
)

// segment is a piece of a pre-compiled template: a literal or a variable.
type segment struct {
	lit string
	v   byte // 0: literal; 'r' request id, 'm' model, 's' retry seconds, 'k' last 4 of the key, 'h' host
}

// compile splits a template on {{RID}}, {{MODEL}}, {{RETRY}}, {{KEY4}},
// {{HOST}}, {{RESETAT}} (now + retry, RFC 3339) and {{MONTHRESET}} (the
// next 1st of the month, 2006-01-02).
func compile(t string) []segment {
	vars := map[string]byte{"{{RID}}": 'r', "{{MODEL}}": 'm', "{{RETRY}}": 's', "{{KEY4}}": 'k', "{{HOST}}": 'h',
		"{{RESETAT}}": 't', "{{MONTHRESET}}": 'd'}
	var segs []segment
	for t != "" {
		i := strings.Index(t, "{{")
		if i < 0 {
			segs = append(segs, segment{lit: t})
			break
		}
		j := strings.Index(t[i:], "}}")
		v, ok := vars[t[i:i+j+2]]
		if j < 0 || !ok {
			segs = append(segs, segment{lit: t[:i+2]})
			t = t[i+2:]
			continue
		}
		if i > 0 {
			segs = append(segs, segment{lit: t[:i]})
		}
		segs = append(segs, segment{v: v})
		t = t[i+j+2:]
	}
	return segs
}

// tvars are the values a template is rendered with.
type tvars struct {
	rid, model, key4, host string
	retry                  int
	now                    time.Time
	// json says values are spliced into JSON strings (escape them).
	json bool
}

func render(b []byte, segs []segment, v *tvars) []byte {
	for _, s := range segs {
		var val string
		switch s.v {
		case 0:
			b = append(b, s.lit...)
			continue
		case 'r':
			val = v.rid
		case 'm':
			val = v.model
		case 'k':
			val = v.key4
		case 'h':
			val = v.host
		case 's':
			b = strconv.AppendInt(b, int64(v.retry), 10)
			continue
		case 't':
			b = v.now.UTC().Add(time.Duration(v.retry)*time.Second).Truncate(time.Second).AppendFormat(b, time.RFC3339)
			continue
		case 'd':
			y, m, _ := v.now.UTC().Date()
			b = time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).AppendFormat(b, "2006-01-02")
			continue
		}
		if v.json {
			start := len(b)
			b = json.AppendEscape(b, val, 0)
			b = append(b[:start], b[start+1:len(b)-1]...) // without the quotes
		} else {
			b = append(b, val...)
		}
	}
	return b
}

// errTemplate is a pre-compiled error response.
type errTemplate struct {
	status      int
	contentType string
	headers     [][2]string // values may hold {{RETRY}}
	hdrs        []header    // headers, compiled by prepare
	body        []segment
	retry       int  // default retry seconds ({{RETRY}}) when the step has no argument
	isJSON      bool // body values are JSON-escaped
}

// header is a pre-compiled response header.
type header struct {
	name  string
	value []segment
}

// prepare compiles the headers once, when the catalog is built.
func (t *errTemplate) prepare() {
	if t.hdrs != nil || len(t.headers) == 0 {
		return
	}
	for _, h := range t.headers {
		t.hdrs = append(t.hdrs, header{name: http.CanonicalHeaderKey(h[0]), value: compile(h[1])})
	}
}

const (
	ctJSON      = "application/json"
	ctGoogle    = "application/json; charset=UTF-8"
	ctHTML      = "text/html; charset=UTF-8"
	ctPlainText = "text/plain"
)

func anthropicErr(status int, typ, msg string, headers ...[2]string) *errTemplate {
	return &errTemplate{status: status, contentType: ctJSON, isJSON: true, headers: headers,
		body: compile(`{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"},"request_id":"{{RID}}"}`)}
}

func openaiErr(status int, typ, code, msg string, headers ...[2]string) *errTemplate {
	c := "null"
	if code != "" {
		c = `"` + code + `"`
	}
	return &errTemplate{status: status, contentType: ctJSON, isJSON: true, headers: headers,
		body: compile(`{"error":{"message":"` + msg + `","type":"` + typ + `","param":null,"code":` + c + `}}`)}
}

func azureErr(status int, code, msg string, headers ...[2]string) *errTemplate {
	return &errTemplate{status: status, contentType: ctJSON, isJSON: true, headers: headers,
		body: compile(`{"error":{"code":"` + code + `","message":"` + msg + `"}}`)}
}

func googleErr(status int, gstatus, msg, details string) *errTemplate {
	body := `{"error":{"code":` + strconv.Itoa(status) + `,"message":"` + msg + `","status":"` + gstatus + `"`
	if details != "" {
		body += `,"details":[` + details + `]`
	}
	body += `}}`
	return &errTemplate{status: status, contentType: ctGoogle, isJSON: true, body: compile(body)}
}

const cloudflare502 = `<html>
<head><title>{{HOST}} | 502: Bad gateway</title></head>
<body>
<div id="cf-wrapper">
<h1 data-translate="error_headline">Bad gateway</h1>
<span class="cf-error-code">Error code 502</span>
<p>The web server reported a bad gateway error.</p>
<p>Cloudflare Ray ID: <strong>8f2a1c3d4e5b6a70</strong></p>
</div>
</body>
</html>
`

// nginx504 is the edge's answer when OpenAI's origin takes too long.
const nginx504 = `<html>
<head><title>504 Gateway Time-out</title></head>
<body>
<center><h1>504 Gateway Time-out</h1></center>
<hr><center>nginx</center>
</body>
</html>
`

const (
	geminiQuotaMsg   = `You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/usage?tab=rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: `
	geminiHelpDetail = `{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]}`
)

func geminiQuota(quotaID, limit, retry string) *errTemplate {
	msg := geminiQuotaMsg + limit + `, model: {{MODEL}}\nPlease retry in ` + retry + `.`
	details := `{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"` +
		quotaID + `","quotaDimensions":{"location":"global","model":"{{MODEL}}"},"quotaValue":"` + limit + `"}]},` +
		geminiHelpDetail + `,{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + retry + `"}`
	return googleErr(429, "RESOURCE_EXHAUSTED", msg, details)
}

// catalog maps dialect and kind to the provider's exact error response,
// following /work/shared/provider-errors.md. Azure falls back to OpenAI.
type catalog map[string]map[string]*errTemplate

func newCatalog() catalog {
	retryAfter := [2]string{"retry-after", "{{RETRY}}"}
	shouldRetry := [2]string{"x-should-retry", "true"}
	anth := map[string]*errTemplate{
		KindOverloaded: anthropicErr(529, "overloaded_error", "Overloaded", shouldRetry),
		KindRateLimit: anthropicErr(429, "rate_limit_error",
			"This request would exceed the rate limit for your organization (00000000-0000-4000-8000-000000000000) of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.",
			retryAfter, shouldRetry, [2]string{"anthropic-ratelimit-requests-limit", "50"}, [2]string{"anthropic-ratelimit-requests-remaining", "0"},
			[2]string{"anthropic-ratelimit-requests-reset", "{{RESETAT}}"}, [2]string{"anthropic-ratelimit-input-tokens-limit", "50000"},
			[2]string{"anthropic-ratelimit-input-tokens-remaining", "50000"}, [2]string{"anthropic-ratelimit-input-tokens-reset", "{{RESETAT}}"}),
		KindCreditLow: anthropicErr(400, "invalid_request_error",
			"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."),
		KindDailyQuota:      {status: 429, contentType: ctJSON, isJSON: true, body: compile(`{"type":"error","error":{"type":"rate_limit_error","message":"You have reached your API usage limits: your organization has crossed its monthly API usage threshold, set based on your organization's API tier. You will regain access on {{MONTHRESET}} at 00:00 UTC.","details":{"error_code":"enforced_spend_limit_reached"}},"request_id":"{{RID}}"}`)},
		KindBadKey:          anthropicErr(401, "authentication_error", "invalid x-api-key", [2]string{"x-should-retry", "false"}),
		KindPermission:      anthropicErr(403, "permission_error", "Your API key does not have permission to use the specified resource."),
		KindNotFound:        anthropicErr(404, "not_found_error", "model: {{MODEL}}"),
		KindInvalidRequest:  anthropicErr(400, "invalid_request_error", "messages: at least one message is required"),
		KindContextOverflow: anthropicErr(400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"),
		KindTooLarge:        anthropicErr(413, "request_too_large", "Request exceeds the maximum allowed number of bytes."),
		KindServerError:     anthropicErr(500, "api_error", "Internal server error", shouldRetry),
		KindTimeout:         anthropicErr(504, "timeout_error", "Request timeout", shouldRetry),
	}
	anth[KindInsufficientQuota] = anth[KindCreditLow]
	anth[KindRateLimit].retry = 2
	anth[KindOverloaded].retry = 0

	oaiRateHeaders := [][2]string{retryAfter, {"x-ratelimit-limit-requests", "500"}, {"x-ratelimit-remaining-requests", "0"},
		{"x-ratelimit-reset-requests", "{{RETRY}}s"}, {"x-ratelimit-limit-tokens", "30000"}, {"x-ratelimit-remaining-tokens", "29000"},
		{"x-ratelimit-reset-tokens", "2ms"}}
	quota := openaiErr(429, "insufficient_quota", "insufficient_quota",
		"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.")
	oai := map[string]*errTemplate{
		KindOverloaded: openaiErr(503, "server_error", "",
			"That model is currently overloaded with other requests. You can retry your request, or contact us through our help center at help.openai.com if the error persists. (Please include the request ID {{RID}} in your message.)"),
		KindRateLimit: openaiErr(429, "requests", "rate_limit_exceeded",
			"Rate limit reached for {{MODEL}} in organization org-mock on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in {{RETRY}}s. Visit https://platform.openai.com/account/rate-limits to learn more.",
			oaiRateHeaders...),
		KindInsufficientQuota: quota,
		KindCreditLow:         quota,
		KindDailyQuota:        quota,
		KindBadKey: openaiErr(401, "invalid_request_error", "invalid_api_key",
			"Incorrect API key provided: sk-***{{KEY4}}. You can find your API key at https://platform.openai.com/account/api-keys."),
		KindPermission: openaiErr(403, "request_forbidden", "unsupported_country_region_territory", "Country, region, or territory not supported"),
		KindNotFound: openaiErr(404, "invalid_request_error", "model_not_found",
			"The model `{{MODEL}}` does not exist or you do not have access to it."),
		KindInvalidRequest: openaiErr(400, "invalid_request_error", "", "Invalid request: 'messages' is a required property"),
		KindContextOverflow: openaiErr(400, "invalid_request_error", "context_length_exceeded",
			"This model's maximum context length is 128000 tokens. However, your messages resulted in 130521 tokens. Please reduce the length of the messages."),
		KindTooLarge: openaiErr(413, "invalid_request_error", "", "Request too large."),
		KindServerError: openaiErr(500, "server_error", "",
			"The server had an error while processing your request. Sorry about that!"),
		KindTimeout: {status: 504, contentType: ctHTML, body: compile(nginx504)},
	}
	oai[KindRateLimit].retry = 2

	azure := map[string]*errTemplate{
		KindRateLimit: azureErr(429, "429",
			"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after {{RETRY}} seconds. Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit.",
			retryAfter, [2]string{"retry-after-ms", "{{RETRY}}000"}, [2]string{"x-ratelimit-remaining-requests", "0"}, [2]string{"x-ms-region", "East US"}),
		KindDailyQuota: azureErr(429, "429",
			"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded call rate limit of your current AIServices S0 pricing tier. Please retry after 86400 seconds.",
			[2]string{"retry-after", "86400"}),
		KindBadKey: azureErr(401, "401",
			"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."),
		KindNotFound: azureErr(404, "DeploymentNotFound",
			"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."),
	}
	azure[KindRateLimit].retry = 2

	gem := map[string]*errTemplate{
		KindOverloaded:        googleErr(503, "UNAVAILABLE", "The model is overloaded. Please try again later.", ""),
		KindRateLimit:         geminiQuota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "10", "{{RETRY}}s"),
		KindDailyQuota:        geminiQuota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "20", "36s"),
		KindInsufficientQuota: geminiQuota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "0", "36s"),
		KindCreditLow: googleErr(402, "RESOURCE_EXHAUSTED",
			"Your prepayment credits are depleted. Please go to AI Studio at https://ai.studio/projects to manage your project and billing.", ""),
		KindBadKey: googleErr(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}},{"@type":"type.googleapis.com/google.rpc.LocalizedMessage","locale":"en-US","message":"API key not valid. Please pass a valid API key."}`),
		KindPermission:      googleErr(403, "PERMISSION_DENIED", "The caller does not have permission", ""),
		KindNotFound:        googleErr(404, "NOT_FOUND", "models/{{MODEL}} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.", ""),
		KindInvalidRequest:  googleErr(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified", ""),
		KindContextOverflow: googleErr(400, "INVALID_ARGUMENT", "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).", ""),
		KindTooLarge:        googleErr(413, "INVALID_ARGUMENT", "Request payload size exceeds the limit: 20971520 bytes.", ""),
		KindServerError:     googleErr(500, "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", ""),
		KindTimeout:         googleErr(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete.", ""),
	}
	gem[KindRateLimit].retry = 2

	html := &errTemplate{status: 502, contentType: ctHTML, body: compile(cloudflare502),
		headers: [][2]string{{"server", "cloudflare"}, {"cf-ray", "8f2a1c3d4e5b6a70-FRA"}}}
	for _, m := range []map[string]*errTemplate{anth, oai, azure, gem} {
		m[KindHTML502] = html
	}
	c := catalog{dialectAnthropic: anth, dialectOpenAI: oai, dialectAzure: azure, dialectGemini: gem}
	for _, m := range c {
		for _, t := range m {
			t.prepare()
		}
	}
	return c
}

// lookup returns the template for kind in dialect (Azure falls back to OpenAI).
func (c catalog) lookup(dialect, kind string) *errTemplate {
	if t := c[dialect][kind]; t != nil {
		return t
	}
	if dialect == dialectAzure {
		return c[dialectOpenAI][kind]
	}
	return nil
}

// missingKey returns the provider's answer to a request without a key.
func missingKeyTemplate(dialect string) *errTemplate {
	t := missingKey(dialect)
	t.prepare()
	return t
}

func missingKey(dialect string) *errTemplate {
	switch dialect {
	case dialectAnthropic:
		return anthropicErr(401, "authentication_error", "x-api-key header is required")
	case dialectGemini:
		return googleErr(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", "")
	case dialectAzure:
		return azureErr(401, "401", "Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.")
	}
	return openaiErr(401, "invalid_request_error", "",
		"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (i.e. user:YOUR_KEY) when using HTTP basic auth (with an empty password). You can obtain an API key from https://platform.openai.com/account/api-keys.")
}
