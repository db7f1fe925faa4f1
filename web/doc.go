// Package web is what a person sees of llmguard: the live dashboard served
// at /ui/ (Handler: the embedded page, and its snapshots as Server-Sent
// Events) and the error decoder, llmguard's classifier compiled to
// WebAssembly (web/decoder, built by go generate ./web) inlined with its
// script in one self-contained page (DecoderPage), so nothing pasted
// leaves the browser.
//
//	live := web.NewLive(eng.Routes())     // chain live.Event into Options.OnEvent
//	ui := web.Handler(&web.Options{Live: live, Status: eng.Status, Routes: eng.Routes()})
//	http.Handle("/ui/", ui)
package web
