package mcp

import "encoding/json"

func jsonUnmarshalString(in string, s *string) error { return json.Unmarshal([]byte(in), s) }

func isJSON(in string) bool { return json.Valid([]byte(in)) }
