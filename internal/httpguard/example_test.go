package httpguard_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/llmguard/llmguard/internal/httpguard"
)

func Example() {
	g, err := httpguard.New(&httpguard.Policy{Keys: []string{"gw-key-1"}, KeyName: "gateway key"})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ref := g.Check(r); ref != nil {
			http.Error(w, ref.Message, ref.Status)
			return
		}
		io.WriteString(w, "ok\n")
	}))
	defer ts.Close()
	for _, h := range []map[string]string{
		{"Authorization": "bearer gw-key-1"},
		{"Authorization": "Bearer gw-key-1", "Origin": "https://evil.example"},
		{},
	} {
		req, _ := http.NewRequest("GET", ts.URL, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %s", resp.StatusCode, b)
	}
	// Output:
	// 200 ok
	// 403 origin "https://evil.example" not allowed: a web page may not call this server (admit it with --allow-origin)
	// 401 missing gateway key: send it as Authorization: Bearer <key> or x-api-key: <key>
}
