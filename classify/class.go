package classify

import "time"

// longWait is the server-requested delay beyond which a rate limit is
// treated as an exhausted quota (Azure's "retry after 86400 seconds").
const longWait = time.Hour

// strength says how much an identifier or status decides the class.
type strength uint8

const (
	none   strength = iota
	weak            // generic: the status or the message may refine it
	strong          // specific: only narrow message traps override it
)

// idClass maps one provider identifier (code, type, reason, status) to a class.
func idClass(id string) (Class, strength) {
	switch id {
	case "insufficient_quota", "billing_not_active", "credit_balance_exhausted",
		"organization_spend_limit_exceeded", "project_spend_limit_exceeded",
		"organization_usage_limit_exceeded", "enforced_spend_limit_reached", "billing_error",
		"billing_hard_limit_reached", "QUOTA_EXHAUSTED", "INSUFFICIENT_G1_CREDITS_BALANCE",
		"insufficient_credits", "payment_required":
		return QuotaExhausted, strong
	case "context_length_exceeded", "model_context_window_exceeded":
		return ContextLengthExceeded, strong
	case "invalid_api_key", "authentication_error", "API_KEY_INVALID", "invalid_authentication",
		"UNAUTHENTICATED", "unauthenticated", "UnrecognizedClientException", "invalid-api-key",
		"incorrect_api_key", "account_deactivated", "access_terminated", "API_KEY_EXPIRED":
		return Auth, strong
	case "permission_error", "PERMISSION_DENIED", "unsupported_country_region_territory",
		"request_forbidden", "permission-denied", "permission_denied", "AccessDeniedException",
		"API_KEY_SERVICE_BLOCKED", "CONSUMER_SUSPENDED", "SERVICE_DISABLED",
		"The caller does not have permission to execute the specified operation":
		return Permission, strong
	case "not_found_error", "model_not_found", "NOT_FOUND", "DeploymentNotFound",
		"ResourceNotFoundException", "not_found", "not-found", "404":
		return NotFound, strong
	case "rate_limit_exceeded", "rate_limit_error", "rate_limited", "slow_down",
		"RATE_LIMIT_EXCEEDED", "rateLimitExceeded", "ThrottlingException", "throttlingException",
		"tokens", "requests", "1300", "tokens_usage_based", "requests_usage_based", "rate-limit-exceeded":
		return RateLimited, strong
	case "overloaded_error", "server_is_overloaded", "MODEL_CAPACITY_EXHAUSTED",
		"service_tier_capacity_exceeded", "3505", "ModelNotReadyException", "engine_overloaded",
		"service_unavailable_error", "overloaded":
		return Overloaded, strong
	case "api_error", "server_error", "INTERNAL", "InternalServerException", "internalServerException",
		"internal_error", "ModelStreamErrorException", "modelStreamErrorException", "conflict_error",
		"ServiceUnavailableException", "serviceUnavailableException", "ModelErrorException":
		return ServerError, strong
	case "timeout_error", "DEADLINE_EXCEEDED", "ModelTimeoutException", "timeout", "request_timeout":
		return Timeout, strong
	case "request_too_large", "payload_too_large", "string_above_max_length":
		return RequestTooLarge, strong
	case "content_filter", "content_policy_violation", "ResponsibleAIPolicyViolation",
		"content_filtered", "moderation", "SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST":
		return ContentFiltered, strong
	case "RESOURCE_EXHAUSTED", "Some resource has been exhausted", "resource-exhausted", "resource_exhausted":
		return RateLimited, weak
	case "UNAVAILABLE", "unavailable":
		return ServerError, weak
	case "credit_limit":
		return QuotaExhausted, weak
	case "invalid_request_error", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "ValidationException",
		"validationException", "invalid_argument", "invalid-argument", "Client specified an invalid argument",
		"unsupported_parameter", "unsupported_value", "invalid_value", "invalid_type", "bad_request",
		"badRequest", "invalid_request", "OUT_OF_RANGE", "missing_required_parameter":
		return InvalidRequest, weak
	}
	return Unknown, none
}

// statusClass maps an HTTP status alone to a class.
func statusClass(status int) Class {
	switch {
	case status == 400, status == 405, status == 406, status == 415, status == 422:
		return InvalidRequest
	case status == 401:
		return Auth
	case status == 402:
		return QuotaExhausted
	case status == 403:
		return Permission
	case status == 404:
		return NotFound
	case status == 408:
		return Timeout
	case status == 409:
		return ServerError
	case status == 413:
		return RequestTooLarge
	case status == 429:
		return RateLimited
	case status == 504:
		return Timeout
	case status == 529:
		return Overloaded
	case status >= 500 && status <= 599:
		return ServerError
	case status >= 400 && status <= 499:
		return InvalidRequest
	}
	return Unknown
}

// terminal classes can only fail again for the same request and key.
func terminal(c Class) bool {
	switch c {
	case QuotaExhausted, RequestTooLarge, ContextLengthExceeded, Auth, Permission, ContentFiltered, NotFound:
		return true
	}
	return false
}

// defaults gives a class's retryable, scope and fallback.
func defaults(c Class) (bool, Scope, bool) {
	switch c {
	case RateLimited, Overloaded, ServerError, Timeout:
		return true, ScopeModel, true
	case Network:
		return true, ScopeProvider, true
	case QuotaExhausted, Auth, Permission:
		return false, ScopeKey, true
	case ContextLengthExceeded:
		return false, ScopeRequest, true
	}
	return false, ScopeRequest, false
}
