package plan

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// maxNodes bounds a plan's tree once its aliases are expanded: a plan of a few hundred
// lines has a few thousand nodes, a "billion laughs" of nested aliases has 10^9.
const maxNodes = 100_000

// expand gives the plan's tree with every alias replaced by a copy of its anchor's node
// and every merge key (<<: *base, or a list of them) folded into its mapping, the
// mapping's own keys winning, as YAML 1.1's merge key says. The parser then reads plain
// mappings and sequences, whatever anchors the author used across steps and ports.
// Copies are counted: past maxNodes the plan is refused with the line of the alias.
func expand(n *yaml.Node) (*yaml.Node, error) {
	count := 0
	return expandNode(n, &count, 0)
}

func expandNode(n *yaml.Node, count *int, depth int) (*yaml.Node, error) {
	if n == nil {
		return nil, nil
	}
	*count++
	if *count > maxNodes || depth > 1000 {
		return nil, &Error{Line: n.Line, Msg: fmt.Sprintf("aliases expand the plan past %d nodes: a plan this size is a mistake or an attack (a YAML bomb)", maxNodes)}
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil, &Error{Line: n.Line, Msg: "an alias without its anchor"}
		}
		c, err := expandNode(n.Alias, count, depth+1)
		if err != nil {
			return nil, err
		}
		out := *c
		out.Anchor = ""
		out.Line, out.Column = n.Line, n.Column
		return &out, nil
	}
	out := *n
	out.Content = nil
	if n.Kind == yaml.MappingNode {
		return expandMapping(n, &out, count, depth)
	}
	for _, c := range n.Content {
		e, err := expandNode(c, count, depth+1)
		if err != nil {
			return nil, err
		}
		out.Content = append(out.Content, e)
	}
	return &out, nil
}

// expandMapping copies a mapping's own pairs, then appends the pairs of its merge keys'
// mappings that it does not have itself (the first merged mapping wins among them).
func expandMapping(n, out *yaml.Node, count *int, depth int) (*yaml.Node, error) {
	var merged []*yaml.Node
	has := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ev, err := expandNode(v, count, depth+1)
		if err != nil {
			return nil, err
		}
		if k.Kind == yaml.ScalarNode && (k.Tag == "!!merge" || k.Value == "<<" && k.Style == 0) {
			srcs := []*yaml.Node{ev}
			if ev.Kind == yaml.SequenceNode {
				srcs = ev.Content
			}
			for _, m := range srcs {
				if m.Kind != yaml.MappingNode {
					return nil, &Error{Line: k.Line, Msg: "<<: want an alias of a mapping (or a list of them) to merge"}
				}
				merged = append(merged, m.Content...)
			}
			continue
		}
		ek, err := expandNode(k, count, depth+1)
		if err != nil {
			return nil, err
		}
		has[ek.Value] = true
		out.Content = append(out.Content, ek, ev)
	}
	for i := 0; i+1 < len(merged); i += 2 {
		if k := merged[i]; !has[k.Value] {
			has[k.Value] = true
			out.Content = append(out.Content, k, merged[i+1])
		}
	}
	return out, nil
}
