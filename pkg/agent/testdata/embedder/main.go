// An embedder's program written against SPEC §13's surface alone, kept
// apart from the package: TestSurface builds it as a module of its own and
// runs it. The typed declarations pin every name and signature of §13.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/panto-dev/panto/pkg/agent"
	_ "github.com/panto-dev/panto/pkg/nullstore"
	"github.com/panto-dev/panto/pkg/provider"
	"github.com/panto-dev/panto/pkg/store"
)

var (
	_ func(context.Context, agent.Config) (*agent.Agent, error)    = agent.New
	_ func(*agent.Agent) string                                    = (*agent.Agent).Name
	_ func(*agent.Agent) []provider.Message                        = (*agent.Agent).Conversation
	_ func(*agent.Agent) *agent.Prompt                             = (*agent.Agent).Dangling
	_ func(*agent.Agent, context.Context, string) error            = (*agent.Agent).Submit
	_ func(*agent.Agent, context.Context, string) error            = (*agent.Agent).AddSystem
	_ func(*agent.Agent, context.Context) (*provider.Reply, error) = (*agent.Agent).Step
	_ func(*agent.Agent, context.Context, string) error            = (*agent.Agent).Compact
	_                                                              = agent.Prompt{ID: "", ParentID: "", Text: ""}
)

func main() {
	ctx := context.Background()
	st, err := store.Open("null:", os.Getenv)
	if err != nil {
		fail(err)
	}
	var s store.Store = st
	cfg := agent.Config{
		Store:    s,
		Session:  "",
		Cwd:      "/embedder",
		Provider: provider.Config{Provider: provider.Offline},
		System:   "be brief",
		Tools: []agent.Tool{{
			Spec: provider.Tool{Name: "bash", InputSchema: []byte(`{"type":"object"}`)},
			Run:  func(ctx context.Context, input string) (output string, err error) { return "one\ntwo\n", nil },
		}},
	}
	a, err := agent.New(ctx, cfg)
	if err != nil {
		fail(err)
	}
	for _, p := range []string{"hello", "$ ls", "more"} {
		if err := a.Submit(ctx, p); err != nil {
			fail(err)
		}
		r, err := a.Step(ctx)
		if err != nil {
			fail(err)
		}
		fmt.Println(r.Blocks[len(r.Blocks)-1].Text)
	}
	if err := a.AddSystem(ctx, "be briefer"); err != nil {
		fail(err)
	}
	if err := a.Compact(ctx, ""); err != nil {
		fail(err)
	}
	fmt.Println(len(a.Conversation()), "messages after Compact, dangling", a.Dangling(), "named", a.Name() != "")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "embedder:", err)
	os.Exit(1)
}
