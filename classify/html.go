package classify

import "strings"

// htmlTitle returns the text of an HTML page's <title>, or its first
// visible words when it has none.
func htmlTitle(t []byte) string {
	// indexFold folds ASCII only, so offsets in s stay valid (strings.ToLower
	// can change byte lengths on non-ASCII or invalid UTF-8).
	s := string(t)
	if i := indexFold(s, "<title"); i >= 0 {
		if j := strings.IndexByte(s[i:], '>'); j >= 0 {
			rest := s[i+j+1:]
			if k := indexFold(rest, "</title"); k >= 0 {
				rest = rest[:k]
			}
			return collapse(htmlUnescape(rest))
		}
	}
	for _, tag := range [...]string{"<h1", "<h2"} {
		if i := indexFold(s, tag); i >= 0 {
			return collapse(stripTags(s[i:]))
		}
	}
	return collapse(stripTags(s))
}

func stripTags(s string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(s) && b.Len() < 300; i++ {
		switch c := s[i]; {
		case c == '<':
			in = true
			b.WriteByte(' ')
		case c == '>':
			in = false
		case !in:
			b.WriteByte(c)
		}
	}
	return htmlUnescape(b.String())
}

func htmlUnescape(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&nbsp;", " ").Replace(s)
}
