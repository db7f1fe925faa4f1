// Package httpguard is the one access policy of llmguard's HTTP edges, the
// gateway (llmguard serve) and the MCP Streamable HTTP server (llmguard mcp
// --http): which Host a request may name, which browser Origin may send it,
// which key it must carry and which body types an API accepts. Each edge
// renders a Refusal in its own dialect.
//
// A web page the user opens can send requests to 127.0.0.1; the policy
// keeps it from spending the user's credits: a foreign Origin is refused,
// a non-loopback Host on a loopback connection (DNS rebinding) is refused,
// and the body types a page may POST without a CORS preflight (text/plain,
// forms, multipart) are refused on the API paths.
//
//	g, err := httpguard.New(&httpguard.Policy{Keys: keys, AllowedOrigins: []string{"https://app.example"}})
//	if err != nil { ... }
//	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
//		if ref := g.Check(r); ref != nil { // CheckSource, then CheckKey
//			http.Error(w, ref.Message, ref.Status)
//			return
//		}
//		...
//	})
package httpguard
