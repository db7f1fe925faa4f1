package mcpproxy

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

func TestDbgHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("slowco")
		st := newStack(t, &Config{Upstreams: []Upstream{f.upstream("slowco")}, ToolTimeout: 2 * time.Second, PingTimeout: time.Second})
		st.call(t, context.Background(), "freeze", nil, nil)
		time.Sleep(1500 * time.Millisecond)
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Logf("%s", buf[:n])
		f.Thaw()
	})
}
