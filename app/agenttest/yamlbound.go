package agenttest

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Bounds on a test file's YAML aliases (issue 32): one 31 KB anchor used
// 20,000 times expanded to 3.9 GB before any check. They are measured on
// the parsed nodes, where an alias is still a reference.
const (
	// MaxYAMLAliases bounds the aliases (*name) of a test file.
	MaxYAMLAliases = 100
	// MaxYAMLExpandedBytes bounds the file's size with every alias
	// expanded (scalars' bytes plus a few per node).
	MaxYAMLExpandedBytes = 2 * MaxFileBytes
)

// checkAliases refuses a document with more than MaxYAMLAliases aliases or
// whose expansion exceeds MaxYAMLExpandedBytes. It runs in time linear in
// the document: an anchored node's size is computed once.
func checkAliases(root *yaml.Node) error {
	aliases := 0
	memo := map[*yaml.Node]int{}
	open := map[*yaml.Node]bool{}
	var size func(n *yaml.Node) (int, error)
	size = func(n *yaml.Node) (int, error) {
		if v, ok := memo[n]; ok {
			return v, nil
		}
		if open[n] {
			return 0, invalid("file", "the test file has an alias inside its own anchor")
		}
		open[n] = true
		defer delete(open, n)
		total := 8 + len(n.Value)
		if n.Kind == yaml.AliasNode {
			aliases++
			if aliases > MaxYAMLAliases {
				return 0, invalid("file", fmt.Sprintf("the test file has more than %d YAML aliases (max %d)", MaxYAMLAliases, MaxYAMLAliases))
			}
			if n.Alias != nil {
				v, err := size(n.Alias)
				if err != nil {
					return 0, err
				}
				total += v
			}
		}
		for _, c := range n.Content {
			v, err := size(c)
			if err != nil {
				return 0, err
			}
			total += v
			if total > MaxYAMLExpandedBytes {
				return 0, invalid("file", fmt.Sprintf("the test file expands to more than %d bytes once its YAML aliases are followed (max %d)",
					MaxYAMLExpandedBytes, MaxYAMLExpandedBytes))
			}
		}
		if total > MaxYAMLExpandedBytes {
			return 0, invalid("file", fmt.Sprintf("the test file expands to more than %d bytes once its YAML aliases are followed (max %d)",
				MaxYAMLExpandedBytes, MaxYAMLExpandedBytes))
		}
		if n.Anchor != "" {
			memo[n] = total
		}
		return total, nil
	}
	_, err := size(root)
	return err
}
