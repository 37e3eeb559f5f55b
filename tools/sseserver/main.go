// Command sseserver serves one recorded-shape Anthropic Messages stream of
// -deltas text deltas on 127.0.0.1, for scripts/bench: panto-turn and
// curl -N fetch the same bytes from it. It prints its URL and serves until
// killed.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/panto-dev/panto/pkg/provider"
)

func main() {
	deltas := flag.Int("deltas", 10000, "text deltas in the stream")
	flag.Parse()
	body := provider.LongStream(*deltas)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	os.Stdout.Sync()
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		w.Write(body)
	}))
}
