package js

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/dop251/goja"
)

// The Config Center helpers read the secrets the daemon handed over for
// this call: only those the tool's definition declares. Every value they
// return is scrubbed by the daemon from whatever the call returns or logs.
//
//   - getApiKey(name) and getSecret(name): a plain secret's value, or a
//     service's api_key field; undefined when the tool has no such secret.
//   - getServiceConfig(name): {name, fields, entries} for a service, {name,
//     value} for a plain secret, null when unknown.
//   - getConfigEntry(name, label?): the fields of the entry with that label,
//     or of the first entry (a service without entries is its own one
//     entry); null when there is none.
//   - getConfigEntries(name): every entry's fields; [] when unknown.
//   - getFieldValue(name, field, label?): the field from that entry, else
//     from the service's own fields; undefined when absent.

// secretDoc is one declared secret as the daemon sends it.
type secretDoc struct {
	Value   *string `json:"value"`
	Service *struct {
		Fields  map[string]any `json:"fields"`
		Entries []any          `json:"entries"`
	} `json:"service"`
}

// configEntry is one entry of a service.
type configEntry struct {
	label  string
	fields map[string]any
}

// value converts Go data to JavaScript with object keys in sorted order,
// so what a tool returns serialises the same way every time.
func (r *realm) value(v any) goja.Value {
	switch t := v.(type) {
	case map[string]any:
		o := r.rt.NewObject()
		for _, k := range slices.Sorted(maps.Keys(t)) {
			_ = o.Set(k, r.value(t[k]))
		}
		return o
	case []any:
		items := make([]any, len(t))
		for i, e := range t {
			items[i] = r.value(e)
		}
		return r.rt.NewArray(items...)
	}
	return r.rt.ToValue(v)
}

func (r *realm) secret(name string) (*secretDoc, bool) {
	raw, ok := r.c.req.JS.Secrets[name]
	if !ok {
		return nil, false
	}
	var d secretDoc
	if json.Unmarshal([]byte(raw), &d) != nil {
		return nil, false
	}
	return &d, true
}

// entries lists a service's entries; a service without any is one entry.
func (d *secretDoc) entries() []configEntry {
	if d.Service == nil {
		return nil
	}
	var out []configEntry
	for _, e := range d.Service.Entries {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		label, _ := m["label"].(string)
		fields, ok := m["fields"].(map[string]any)
		if !ok {
			fields = map[string]any{}
			for k, v := range m {
				if k != "label" {
					fields[k] = v
				}
			}
		}
		out = append(out, configEntry{label: label, fields: fields})
	}
	if len(out) == 0 && d.Service.Fields != nil {
		out = append(out, configEntry{fields: d.Service.Fields})
	}
	return out
}

func (d *secretDoc) entry(label goja.Value) (configEntry, bool) {
	es := d.entries()
	if len(es) == 0 {
		return configEntry{}, false
	}
	if label == nil || goja.IsUndefined(label) || goja.IsNull(label) {
		return es[0], true
	}
	want := label.String()
	for _, e := range es {
		if e.label == want {
			return e, true
		}
	}
	return configEntry{}, false
}

func (r *realm) utilGetAPIKey(fc goja.FunctionCall) goja.Value {
	d, ok := r.secret(fc.Argument(0).String())
	switch {
	case !ok:
		return goja.Undefined()
	case d.Value != nil:
		return r.rt.ToValue(*d.Value)
	case d.Service != nil:
		if v, ok := d.Service.Fields["api_key"]; ok {
			return r.rt.ToValue(v)
		}
	}
	return goja.Undefined()
}

func (r *realm) utilGetServiceConfig(fc goja.FunctionCall) goja.Value {
	name := fc.Argument(0).String()
	d, ok := r.secret(name)
	if !ok {
		return goja.Null()
	}
	if d.Value != nil {
		return r.value(map[string]any{"name": name, "value": *d.Value})
	}
	entries := []any{}
	for _, e := range d.entries() {
		entries = append(entries, map[string]any{"label": e.label, "fields": e.fields})
	}
	fields := map[string]any{}
	if d.Service != nil && d.Service.Fields != nil {
		fields = d.Service.Fields
	}
	return r.value(map[string]any{"name": name, "fields": fields, "entries": entries})
}

func (r *realm) utilGetConfigEntry(fc goja.FunctionCall) goja.Value {
	d, ok := r.secret(fc.Argument(0).String())
	if !ok {
		return goja.Null()
	}
	e, ok := d.entry(fc.Argument(1))
	if !ok {
		return goja.Null()
	}
	return r.value(e.fields)
}

func (r *realm) utilGetConfigEntries(fc goja.FunctionCall) goja.Value {
	out := []any{}
	if d, ok := r.secret(fc.Argument(0).String()); ok {
		for _, e := range d.entries() {
			out = append(out, e.fields)
		}
	}
	return r.value(out)
}

func (r *realm) utilGetFieldValue(fc goja.FunctionCall) goja.Value {
	d, ok := r.secret(fc.Argument(0).String())
	if !ok {
		return goja.Undefined()
	}
	field := fc.Argument(1).String()
	if e, ok := d.entry(fc.Argument(2)); ok {
		if v, ok := e.fields[field]; ok {
			return r.value(v)
		}
	}
	if d.Service != nil {
		if v, ok := d.Service.Fields[field]; ok {
			return r.value(v)
		}
	}
	return goja.Undefined()
}
