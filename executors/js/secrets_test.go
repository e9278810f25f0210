package js

import (
	"context"
	"testing"

	"github.com/toolcage/toolcage/executors"
)

func TestConfigCenterHelpers(t *testing.T) {
	secrets := map[string]string{
		"weatherapi": `{"value":"wk-123"}`,
		"mail": `{"service":{"fields":{"api_key":"mk-1","base_url":"https://mail.example.com"},
			"entries":[{"label":"work","fields":{"user":"ada","api_key":"mk-work"}},{"label":"home","fields":{"user":"bob"}}]}}`,
		"solo": `{"service":{"fields":{"api_key":"sk-solo","region":"eu"}}}`,
	}
	tests := []struct{ code, want string }{
		{`return utils.getApiKey('weatherapi')`, `"wk-123"`},
		{`return utils.getSecret('weatherapi')`, `"wk-123"`},
		{`return utils.getApiKey('mail')`, `"mk-1"`},
		{`return utils.getApiKey('missing') === undefined`, `true`},
		{`return utils.getServiceConfig('mail').fields.base_url`, `"https://mail.example.com"`},
		{`return utils.getServiceConfig('mail').entries.map(e => e.label)`, `["work","home"]`},
		{`return utils.getServiceConfig('nope')`, `null`},
		{`return utils.getConfigEntry('mail').user`, `"ada"`},
		{`return utils.getConfigEntry('mail', 'home').user`, `"bob"`},
		{`return utils.getConfigEntry('mail', 'office')`, `null`},
		{`return utils.getConfigEntries('mail').length`, `2`},
		{`return utils.getConfigEntries('solo')`, `[{"api_key":"sk-solo","region":"eu"}]`},
		{`return utils.getConfigEntries('nope')`, `[]`},
		{`return utils.getFieldValue('mail', 'api_key', 'work')`, `"mk-work"`},
		{`return utils.getFieldValue('mail', 'base_url', 'home')`, `"https://mail.example.com"`},
		{`return utils.getFieldValue('solo', 'region')`, `"eu"`},
		{`return utils.getFieldValue('solo', 'nothing') === undefined`, `true`},
	}
	e := New(Config{})
	for _, tt := range tests {
		res, err := e.Execute(context.Background(), &executors.Request{JS: &executors.JSCall{Code: tt.code, Secrets: secrets}})
		if err != nil {
			t.Fatalf("%s: %v", tt.code, err)
		}
		if res.IsError || string(res.Value) != tt.want {
			t.Errorf("%s = %s (%s), want %s", tt.code, res.Value, res.Error, tt.want)
		}
	}
	// A call without secrets sees none.
	res, err := e.Execute(context.Background(), &executors.Request{JS: &executors.JSCall{Code: `return [utils.getApiKey('weatherapi') === undefined, utils.getConfigEntries('mail').length]`}})
	if err != nil || string(res.Value) != `[true,0]` {
		t.Fatalf("no secrets: %v %s", err, res.Value)
	}
}
