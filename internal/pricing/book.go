package pricing

import "strings"

// Book finds the prices of each model in each billed mode once, by the
// table's rules (Resolve, then Prices.Mode), and says how. It is the one
// way every output prices a reply: panto-cost's reports and the
// transcript page ask it the same question and get the same answer.
type Book struct {
	t    Table
	seen map[bookKey]Found
}

type bookKey struct {
	key  Key
	mode string
}

// Found is what a Book says of a model in a mode.
type Found struct {
	Prices *Prices // nil: unknown
	As     string  // "" or, priced by its name alone, the model whose prices were used
	Reason string  // for nil: why, as a missing price names it
}

// NewBook makes a Book of t.
func NewBook(t Table) *Book { return &Book{t: t, seen: map[bookKey]Found{}} }

// Find returns the prices of k in mode ("" or "standard": the model's own;
// "priority", "flex", "fast": the mode's, never the standard ones).
func (b *Book) Find(k Key, mode string) Found {
	bk := bookKey{k, mode}
	if f, ok := b.seen[bk]; ok {
		return f
	}
	var f Found
	r := b.t.Resolve(k)
	switch r.How {
	case ByName:
		f.As = r.As.String()
	case Ambiguous:
		var names []string
		for _, o := range r.Others {
			names = append(names, o.String())
		}
		f.Reason = k.String() + " (its provider is not in the price table, and " + strings.Join(names, ", ") + " price it differently)"
	}
	if r.Prices != nil {
		if f.Prices = r.Prices.Mode(mode); f.Prices == nil {
			f.Reason = k.String() + " in " + mode + " mode"
		}
	} else if f.Reason == "" {
		f.Reason = k.String()
	}
	b.seen[bk] = f
	return f
}

// Cost prices one reply of model k billed in mode.
func (b *Book) Cost(k Key, mode string, u Usage) (Cost, Found, error) {
	f := b.Find(k, mode)
	c, err := Of(f.Prices, u)
	return c, f, err
}
