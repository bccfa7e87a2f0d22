package onvif

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Node is one element of a parsed document. Name is the local name; Space
// the namespace URI as resolved by the decoder.
type Node struct {
	Name     string
	Space    string
	Attrs    []xml.Attr
	Children []*Node
	Text     string
}

// parseXML parses data into a tree, bounded by maxDepth, maxNodes and
// maxTextBytes. It never panics.
func parseXML(data []byte) (*Node, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	// Entities other than the five predefined ones are refused.
	d.Entity = nil
	d.CharsetReader = func(charset string, r io.Reader) (io.Reader, error) {
		switch strings.ToLower(charset) {
		case "utf-8", "us-ascii", "ascii", "":
			return r, nil
		}
		return nil, fmt.Errorf("charset %q", charset)
	}
	var root *Node
	var stack []*Node
	nodes := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			nodes++
			if nodes > maxNodes {
				return nil, fmt.Errorf("%w: more than %d elements", ErrMalformed, maxNodes)
			}
			if len(stack) >= maxDepth {
				return nil, fmt.Errorf("%w: nested deeper than %d", ErrMalformed, maxDepth)
			}
			n := &Node{Name: t.Name.Local, Space: t.Name.Space, Attrs: t.Attr}
			if len(stack) == 0 {
				if root != nil {
					return nil, fmt.Errorf("%w: more than one root element", ErrMalformed)
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, fmt.Errorf("%w: unbalanced end element", ErrMalformed)
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				n := stack[len(stack)-1]
				if len(n.Text)+len(t) <= maxTextBytes {
					n.Text += string(t)
				}
			}
		case xml.Directive:
			return nil, fmt.Errorf("%w: directives are not accepted", ErrMalformed)
		}
	}
	if root == nil {
		return nil, fmt.Errorf("%w: empty document", ErrMalformed)
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("%w: unclosed element", ErrMalformed)
	}
	return root, nil
}

// Child returns the first child named local (local name, any namespace), or nil.
func (n *Node) Child(local string) *Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Name == local {
			return c
		}
	}
	return nil
}

// Path follows children by local names; nil when one is missing.
func (n *Node) Path(locals ...string) *Node {
	for _, l := range locals {
		n = n.Child(l)
	}
	return n
}

// All returns the children named local.
func (n *Node) All(local string) []*Node {
	if n == nil {
		return nil
	}
	var out []*Node
	for _, c := range n.Children {
		if c.Name == local {
			out = append(out, c)
		}
	}
	return out
}

// Find returns the first element named local in n's subtree (n included,
// depth first), or nil.
func (n *Node) Find(local string) *Node {
	if n == nil {
		return nil
	}
	if n.Name == local {
		return n
	}
	for _, c := range n.Children {
		if f := c.Find(local); f != nil {
			return f
		}
	}
	return nil
}

// Value is the trimmed text of n ("" for nil).
func (n *Node) Value() string {
	if n == nil {
		return ""
	}
	return strings.TrimSpace(n.Text)
}

// Attr returns the value of the attribute with local name local.
func (n *Node) Attr(local string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attrs {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// marshal writes n back as XML, each element declaring its namespace as
// the default one (prefixes are not kept). Namespaced attributes other
// than the element's own are dropped.
func (n *Node) marshal(b *strings.Builder) {
	b.WriteString("<" + n.Name)
	if n.Space != "" {
		b.WriteString(` xmlns="` + xmlEscape(n.Space) + `"`)
	}
	for _, a := range n.Attrs {
		if a.Name.Space == "" && a.Name.Local != "xmlns" {
			b.WriteString(" " + a.Name.Local + `="` + xmlEscape(a.Value) + `"`)
		}
	}
	b.WriteString(">")
	if len(n.Children) == 0 {
		b.WriteString(xmlEscape(strings.TrimSpace(n.Text)))
	}
	for _, c := range n.Children {
		c.marshal(b)
	}
	b.WriteString("</" + n.Name + ">")
}
