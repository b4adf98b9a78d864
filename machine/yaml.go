package machine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads a machine description from a YAML file (the --config flag)
// and normalizes it; see Parse.
func Load(path string) (*Machine, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse reads a machine description in YAML and normalizes it. name is the
// file name, used in error messages ("name:line: …") and, without
// directory and extension, as the machine's name when the file gives none.
//
// The top level is a mapping with the keys name, description,
// memory_latency, processors, mapping, pin, nodes, placement, page_size,
// remote_latency, remote_dirty_latency and caches; caches is a list of
// mappings with the key name and the keys of the inline spec (Keys),
// taking the same values: sizes like 32k or plain integers, assoc a number
// or full, write back or through, allocate and shared booleans. mapping is
// round-robin (or rr) or pinned (see ParseMapping); pin is a list of
// processor numbers, [0, 1, 1, 0], or the same as a comma-separated string
// "0,1,1,0" (see ParsePin). nodes and the latencies are positive integers,
// page_size a size like 4k, placement first-touch (ft), round-robin (rr)
// or interleave (see ParsePlacement). Unknown and repeated keys are errors.
// Errors are *FileError values giving the line, wrapping a *ConfigError
// when the description itself is at fault.
func Parse(data []byte, name string) (*Machine, error) {
	file := name
	if file == "" {
		file = "config"
	}
	p := &yamlParser{file: file}
	m, err := p.parse(data)
	if err != nil {
		return nil, err
	}
	if m.Name == "" && name != "" {
		m.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	if err := m.Normalize(); err != nil {
		return nil, p.place(err)
	}
	return m, nil
}

// yamlParser holds the positions Parse needs to place Normalize's errors.
type yamlParser struct {
	file      string
	top       map[string]int   // machine key → line
	cacheLine []int            // cache index → line of its mapping
	keyLine   []map[string]int // cache index → key → line
}

var topKeys = []string{"name", "description", "memory_latency", "processors", "mapping", "pin",
	"nodes", "placement", "page_size", "remote_latency", "remote_dirty_latency", "caches"}

// errorf returns a *FileError at line wrapping a *ConfigError.
func (p *yamlParser) errorf(line int, ce *ConfigError) error {
	return &FileError{File: p.file, Line: line, Err: ce}
}

var yamlLine = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

func (p *yamlParser) parse(data []byte) (*Machine, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if sub := yamlLine.FindStringSubmatch(err.Error()); sub != nil {
			n, _ := strconv.Atoi(sub[1])
			return nil, &FileError{File: p.file, Line: n, Err: errors.New(sub[2])}
		}
		return nil, &FileError{File: p.file, Err: err}
	}
	m := &Machine{}
	p.top = map[string]int{}
	if doc.Kind == 0 || len(doc.Content) == 0 { // empty file
		return m, nil
	}
	root := resolve(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return m, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, p.errorf(root.Line, &ConfigError{Msg: "want a mapping with keys " + strings.Join(topKeys, ", ")})
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], resolve(root.Content[i+1])
		key := strings.ToLower(k.Value)
		if _, dup := p.top[key]; dup {
			return nil, p.errorf(k.Line, &ConfigError{Key: key, Msg: fmt.Sprintf("given twice (first at line %d)", p.top[key])})
		}
		p.top[key] = k.Line
		if !slices.Contains(topKeys, key) {
			return nil, p.errorf(k.Line, &ConfigError{Msg: fmt.Sprintf("unknown key %q (want %s)", k.Value, strings.Join(topKeys, ", "))})
		}
		switch key {
		case "caches":
			if err := p.caches(m, v); err != nil {
				return nil, err
			}
			continue
		case "pin":
			switch v.Kind {
			case yaml.SequenceNode:
				if err := p.pinList(m, v); err != nil {
					return nil, err
				}
				continue
			case yaml.MappingNode:
				return nil, p.errorf(v.Line, &ConfigError{Key: key, Msg: `want a list of processors, [0, 1, 1, 0], or "0,1,1,0"`})
			}
		}
		val, err := p.scalar(v, &ConfigError{Key: key})
		if err != nil {
			return nil, err
		}
		switch key {
		case "name":
			m.Name = val
		case "description":
			m.Description = val
		case "memory_latency", "processors", "nodes", "remote_latency", "remote_dirty_latency":
			n, msg := positive(val)
			if msg != "" {
				return nil, p.errorf(v.Line, &ConfigError{Key: key, Msg: msg})
			}
			switch key {
			case "memory_latency":
				m.MemoryLatency = n
			case "processors":
				m.Processors = n
			case "nodes":
				m.Nodes = n
			case "remote_latency":
				m.RemoteLatency = n
			case "remote_dirty_latency":
				m.RemoteDirtyLatency = n
			}
		case "page_size":
			n, err := ParsePageSize(val)
			if err != nil {
				return nil, &FileError{File: p.file, Line: v.Line, Err: err}
			}
			m.PageSize = n
		case "placement":
			placement, err := ParsePlacement(val)
			if err != nil {
				return nil, &FileError{File: p.file, Line: v.Line, Err: err}
			}
			m.Placement = placement
		case "mapping":
			mapping, err := ParseMapping(val)
			if err != nil {
				return nil, &FileError{File: p.file, Line: v.Line, Err: err}
			}
			m.Mapping = mapping
		case "pin":
			pin, err := ParsePin(val)
			if err != nil {
				return nil, &FileError{File: p.file, Line: v.Line, Err: err}
			}
			m.Pin = pin
		}
	}
	return m, nil
}

// pinList reads pin given as a YAML list into m.
func (p *yamlParser) pinList(m *Machine, list *yaml.Node) error {
	if len(list.Content) == 0 {
		return p.errorf(list.Line, &ConfigError{Key: "pin", Msg: "empty list (give the processor of each thread, or leave pin out)"})
	}
	pin := make([]int, 0, len(list.Content))
	for i, n := range list.Content {
		n = resolve(n)
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			return p.errorf(n.Line, &ConfigError{Key: "pin", Msg: fmt.Sprintf("entry %d: want a processor number", i+1)})
		}
		x, err := pinEntry(i, n.Value)
		if err != nil {
			return p.errorf(n.Line, err)
		}
		pin = append(pin, x)
	}
	m.Pin = pin
	return nil
}

// caches reads the caches list into m.
func (p *yamlParser) caches(m *Machine, list *yaml.Node) error {
	if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		return p.errorf(list.Line, &ConfigError{Key: "caches", Msg: "want a list of caches"})
	}
	for i, n := range list.Content {
		n = resolve(n)
		if n.Kind != yaml.MappingNode {
			return p.errorf(n.Line, &ConfigError{Key: "caches", Msg: fmt.Sprintf("entry %d is not a mapping of keys to values", i+1)})
		}
		c := newCache("")
		lines := map[string]int{}
		// Read the name first so errors about other keys can name the cache.
		for j := 0; j+1 < len(n.Content); j += 2 {
			if strings.ToLower(n.Content[j].Value) == "name" {
				v := resolve(n.Content[j+1])
				if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
					c.Name = strings.TrimSpace(v.Value)
				}
			}
		}
		for j := 0; j+1 < len(n.Content); j += 2 {
			k, v := n.Content[j], resolve(n.Content[j+1])
			key := strings.ToLower(k.Value)
			ce := &ConfigError{Cache: c.Name, Key: key, index: i + 1}
			if _, dup := lines[key]; dup {
				ce.Msg = fmt.Sprintf("given twice (first at line %d)", lines[key])
				return p.errorf(k.Line, ce)
			}
			lines[key] = k.Line
			if key != "name" && !slices.Contains(Keys, key) {
				ce.Key = ""
				ce.Msg = fmt.Sprintf("unknown key %q (want name, %s)", k.Value, strings.Join(Keys, ", "))
				return p.errorf(k.Line, ce)
			}
			val, err := p.scalar(v, ce)
			if err != nil {
				return err
			}
			if err := setKey(&c, key, val); err != nil {
				err.index = i + 1
				return p.errorf(v.Line, err)
			}
		}
		m.Caches = append(m.Caches, c)
		p.cacheLine = append(p.cacheLine, n.Line)
		p.keyLine = append(p.keyLine, lines)
	}
	return nil
}

// scalar returns the text of a scalar value node, or an error built on ce.
func (p *yamlParser) scalar(v *yaml.Node, ce *ConfigError) (string, error) {
	switch {
	case v.Kind != yaml.ScalarNode:
		ce.Msg = "want a single value, not a list or mapping"
	case v.Tag == "!!null":
		ce.Msg = "missing value"
	default:
		return v.Value, nil
	}
	return "", p.errorf(v.Line, ce)
}

// place adds the file position to an error of Normalize: the line of the
// offending key if the file gives it, else the line of the cache.
func (p *yamlParser) place(err error) error {
	var ce *ConfigError
	if !errors.As(err, &ce) {
		return &FileError{File: p.file, Err: err}
	}
	line := 0
	switch i := ce.index - 1; {
	case i >= 0 && i < len(p.cacheLine):
		line = p.cacheLine[i]
		if l, ok := p.keyLine[i][ce.Key]; ok {
			line = l
		}
	case ce.Key != "":
		line = p.top[ce.Key]
	default:
		line = p.top["caches"]
	}
	return &FileError{File: p.file, Line: line, Err: err}
}

// resolve follows YAML aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}
