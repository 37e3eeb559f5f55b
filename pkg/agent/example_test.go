package agent_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/panto-dev/panto/pkg/agent"
	"github.com/panto-dev/panto/pkg/provider"
	"github.com/panto-dev/panto/pkg/store"
)

// An embedder's whole program: a session with a tool, persisted as it
// goes, then resumed in another run. The offline model stands in for a
// real one (provider.Anthropic with an APIKey and a Model).
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	getenv := func(k string) string {
		if k == "PANTO_SESSION_DIR" {
			return dir // the sessions' base directory; by default the XDG one
		}
		return ""
	}
	st, err := store.Open("", getenv) // "" files, "null:" nothing kept, "postgres://…"
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	tools := []agent.Tool{{
		Spec: provider.Tool{Name: "bash", Description: "Run a shell command.", InputSchema: []byte(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		Run: func(ctx context.Context, input string) (string, error) {
			return "README.md\ngo.mod\n", nil // a real tool would run the command in input
		},
	}}
	model := provider.Config{Provider: provider.Offline}

	a, err := agent.New(ctx, agent.Config{Store: st, Cwd: "/home/u/proj", Provider: model, System: "You are terse.", Tools: tools})
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Submit(ctx, "$ ls"); err != nil { // the offline model calls the tool for a line "$ …"
		log.Fatal(err)
	}
	reply, err := a.Step(ctx) // the reply, the tool's result, the reply to it: all written
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply.Blocks[1].Text)

	// Later, another process: the same session, resumed.
	b, err := agent.New(ctx, agent.Config{Store: st, Session: a.Name(), Provider: model, System: "You are terse.", Tools: tools})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(b.Conversation()), "messages, dangling:", b.Dangling())
	b.Submit(ctx, "thanks")
	if reply, err = b.Step(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply.Blocks[1].Text)
	// Output:
	// The tool printed 2 lines. The first: "README.md".
	// 5 messages, dangling: <nil>
	// Offline reply 3 to: "thanks"
}
