package classify

import "strings"

// maxBody is how much of a body the classifier parses.
const maxBody = 64 << 10

// envelope is the union of every top-level shape the classifier knows.
type envelope struct {
	Type, Object, Message, Code string
	Err                         errObj
	hasErr                      bool
	ErrStr                      string // xAI's flat form: "error" is a string
	hasErrStr                   bool
	RequestID, Title, Detail    string
	Status                      string
	Retryable, hasRetryable     bool
	RetryAfter, RayID, UserID   string
	BlockReason                 string // Gemini promptFeedback.blockReason
	finishError                 bool   // a choice with finish_reason "error"
	Resp                        errObj // OpenAI Responses response.error
	hasResp                     bool
}

// errObj is the inner "error" object of the OpenAI, Anthropic, Google and
// OpenRouter envelopes.
type errObj struct {
	Type, Message, Code, Status string
	InnerCode                   string // Azure innererror.code
	DetailsErrorCode            string // Anthropic error.details.error_code
	Details                     []gDetail
	Meta                        orMeta
	hasMeta                     bool
	Reasons                     []string // legacy Google errors[].reason
}

// orMeta is OpenRouter's error.metadata.
type orMeta struct {
	Raw, ProviderName, LimitSource, Reason, Reset string
}

// gDetail is one google.rpc.Status detail (ErrorInfo, QuotaFailure, RetryInfo).
type gDetail struct {
	Type, Reason, RetryDelay                                   string
	QuotaLimit, QuotaLimitValue, QuotaResetDelay, QuotaResetAt string
	QuotaIDs                                                   []string
	zeroQuota                                                  bool
}

func decodeEnvelope(p *scanner, env *envelope) {
	p.object(func(k string) {
		switch k {
		case "type":
			env.Type = p.text()
		case "object":
			env.Object = p.text()
		case "message":
			env.Message = p.text()
		case "code":
			env.Code = p.text()
		case "error":
			switch p.peek() {
			case '{':
				env.hasErr = true
				decodeErrObj(p, &env.Err)
			case '"':
				env.hasErrStr = true
				env.ErrStr = p.str()
			default:
				p.skip()
			}
		case "request_id":
			env.RequestID = p.text()
		case "title":
			env.Title = p.text()
		case "detail":
			env.Detail = p.text()
		case "status":
			env.Status = p.text()
		case "retryable":
			switch p.text() {
			case "true":
				env.Retryable, env.hasRetryable = true, true
			case "false":
				env.Retryable, env.hasRetryable = false, true
			}
		case "retry_after":
			env.RetryAfter = p.text()
		case "ray_id":
			env.RayID = p.text()
		case "user_id":
			env.UserID = p.text()
		default:
			decodeNested(p, env, k)
		}
	})
}

// decodeNested reads the envelope's members that are objects or arrays
// other than "error"; any other member is skipped.
func decodeNested(p *scanner, env *envelope, k string) {
	switch k {
	case "promptFeedback":
		p.object(func(k string) {
			if k == "blockReason" {
				env.BlockReason = p.text()
			} else {
				p.skip()
			}
		})
	case "choices":
		p.array(func(int) {
			p.object(func(k string) {
				if k == "finish_reason" {
					if p.text() == "error" {
						env.finishError = true
					}
				} else {
					p.skip()
				}
			})
		})
	case "response":
		p.object(func(k string) {
			if k == "error" && p.peek() == '{' {
				env.hasResp = true
				decodeErrObj(p, &env.Resp)
			} else {
				p.skip()
			}
		})
	default:
		p.skip()
	}
}

func decodeErrObj(p *scanner, e *errObj) {
	p.object(func(k string) {
		switch k {
		case "type":
			e.Type = p.text()
		case "message":
			e.Message = p.text()
		case "code":
			e.Code = p.text()
		case "status":
			e.Status = p.text()
		case "details":
			switch p.peek() {
			case '{':
				p.object(func(k string) {
					if k == "error_code" {
						e.DetailsErrorCode = p.text()
					} else {
						p.skip()
					}
				})
			case '[':
				p.array(func(int) {
					e.Details = append(e.Details, gDetail{})
					decodeGDetail(p, &e.Details[len(e.Details)-1])
				})
			default:
				p.skip()
			}
		case "metadata":
			if p.peek() != '{' {
				p.skip()
				return
			}
			e.hasMeta = true
			m := &e.Meta
			p.object(func(k string) {
				switch k {
				case "raw":
					m.Raw = p.raw()
				case "provider_name":
					m.ProviderName = p.text()
				case "limit_source":
					m.LimitSource = p.text()
				case "reason":
					m.Reason = p.text()
				case "headers":
					p.object(func(k string) {
						if strings.EqualFold(k, "X-RateLimit-Reset") {
							m.Reset = p.text()
						} else {
							p.skip()
						}
					})
				default:
					p.skip()
				}
			})
		case "innererror":
			p.object(func(k string) {
				if k == "code" {
					e.InnerCode = p.text()
				} else {
					p.skip()
				}
			})
		case "errors":
			p.array(func(int) {
				p.object(func(k string) {
					if k == "reason" {
						e.Reasons = append(e.Reasons, p.text())
					} else {
						p.skip()
					}
				})
			})
		default:
			p.skip()
		}
	})
}

func decodeGDetail(p *scanner, d *gDetail) {
	p.object(func(k string) {
		switch k {
		case "@type":
			d.Type = p.text()
		case "reason":
			d.Reason = p.text()
		case "retryDelay":
			d.RetryDelay = p.text()
		case "metadata":
			p.object(func(k string) {
				switch k {
				case "quota_limit":
					d.QuotaLimit = p.text()
				case "quota_limit_value":
					d.QuotaLimitValue = p.text()
				case "quotaResetDelay":
					d.QuotaResetDelay = p.text()
				case "quotaResetTimeStamp":
					d.QuotaResetAt = p.text()
				default:
					p.skip()
				}
			})
		case "violations":
			p.array(func(int) {
				p.object(func(k string) {
					switch k {
					case "quotaId":
						d.QuotaIDs = append(d.QuotaIDs, p.text())
					case "quotaValue":
						if p.text() == "0" {
							d.zeroQuota = true
						}
					default:
						p.skip()
					}
				})
			})
		default:
			p.skip()
		}
	})
}
