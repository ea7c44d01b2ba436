package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// interpolator replaces ${env:NAME} and ${file:PATH} in the config's scalar values, except in
// credential fields, which stay references (env://NAME, file:///path) resolved only when used.
type interpolator struct {
	getenv func(string) string
	dir    string // ${file:relative} is relative to the config's directory
	errAt  func(line int, format string, a ...any) error
}

var interpPattern = regexp.MustCompile(`\$\{([^{}]*)\}`)

// walk interpolates every scalar under n; path names n for messages.
func (in interpolator) walk(n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			p := path
			if n.Kind == yaml.SequenceNode {
				p = fmt.Sprintf("%s[%d]", path, i)
			}
			if err := in.walk(c, p); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := joinPath(path, k.Value)
			if slices.Contains(credentialKeys, k.Value) {
				if strings.Contains(v.Value, "${") {
					return in.errAt(v.Line, "%s is a credential: give a reference (env://NAME or file:///path), not ${…}, so the secret never enters the config", p)
				}
				continue
			}
			if err := in.walk(v, p); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		out, err := in.expand(n.Value)
		if err != nil {
			return in.errAt(n.Line, "%s: %v", path, err)
		}
		if out != n.Value {
			n.Value, n.Tag, n.Style = out, "", 0 // re-resolve the type: ${env:ROWS} may be a number
		}
	}
	return nil
}

// expand replaces the placeholders of s. An unset variable, a missing file or an unknown kind
// of placeholder is an error naming it.
func (in interpolator) expand(s string) (string, error) {
	var first error
	out := interpPattern.ReplaceAllStringFunc(s, func(m string) string {
		v, err := in.value(m[2 : len(m)-1])
		if err != nil && first == nil {
			first = err
		}
		return v
	})
	return out, first
}

func (in interpolator) value(ref string) (string, error) {
	kind, arg, _ := strings.Cut(ref, ":")
	switch {
	case arg == "":
		return "", fmt.Errorf("${%s}: want ${env:NAME} or ${file:PATH}", ref)
	case kind == "env":
		v := in.getenv(arg)
		if v == "" {
			return "", fmt.Errorf("${env:%s}: the environment variable %s is not set", arg, arg)
		}
		return v, nil
	case kind == "file":
		p := arg
		if !filepath.IsAbs(p) {
			p = filepath.Join(in.dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("${file:%s}: cannot read %s", arg, p)
		}
		return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
	}
	return "", fmt.Errorf("${%s}: unknown kind %q (want env or file)", ref, kind)
}
