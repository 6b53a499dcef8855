package modules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// orderKey holds, in each decoded object, its keys in document order:
// "exports" conditions are tried in the order the package lists them.
const orderKey = "\x00order"

// maxJSONDepth bounds nesting of decoded package.json values.
const maxJSONDepth = 64

var errJSONDepth = errors.New("modules: JSON nested too deeply")

// decodeOrdered decodes JSON like json.Unmarshal into any, except that
// objects remember their key order under orderKey.
func decodeOrdered(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("modules: trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errJSONDepth
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			var order []string
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("modules: bad object key")
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if k == orderKey {
					continue
				}
				if _, dup := m[k]; !dup {
					order = append(order, k)
				}
				m[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			m[orderKey] = order
			return m, nil
		case '[':
			var arr []any
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			if arr == nil {
				arr = []any{}
			}
			return arr, nil
		}
		return nil, errors.New("modules: unexpected delimiter")
	default:
		return t, nil
	}
}

// userKeys returns the keys of a decoded object without orderKey.
func userKeys(m map[string]any) []string {
	if ord, ok := m[orderKey].([]string); ok {
		return ord
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != orderKey {
			keys = append(keys, k)
		}
	}
	return keys
}
