package policy_test

import (
	"fmt"

	"github.com/toolcage/toolcage/policy"
)

func ExampleRenderShell() {
	// One simple command: an argv, no shell. Each placeholder is one element.
	r, err := policy.RenderShell("dig +short {{.record_type}} {{.domain}}",
		map[string]any{"record_type": "MX", "domain": "example.com; rm -rf ~"}, policy.ShellOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %q\n", r.Mode, r.Argv)

	// Shell syntax: sh -c text, every value one single-quoted word.
	r, err = policy.RenderShell("ls -la {{dir}} | wc -l", map[string]any{"dir": "it's $(here)"}, policy.ShellOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Mode, r.Command)

	// A value may not become an option.
	_, err = policy.RenderShell("curl {{url}}", map[string]any{"url": "--upload-file=/etc/passwd"}, policy.ShellOptions{})
	fmt.Println(err)
	// Output:
	// argv ["dig" "+short" "MX" "example.com; rm -rf ~"]
	// shell ls -la 'it'\''s $(here)' | wc -l
	// argument "url": starts with "-" where the command would read it as an option; the parameter must allow a leading "-" (or the template must put "--" before it)
}

func ExampleValidateShellTemplate() {
	fmt.Println(policy.ValidateShellTemplate(`echo "Hello {{.name}}"`))
	fmt.Println(policy.ValidateShellTemplate(`sh -c {{.script}}`))
	fmt.Println(policy.ValidateShellTemplate(`echo Hello {{.name}}`))
	// Output:
	// template error at line 1, column 13: placeholder inside double quotes; write it unquoted: values are quoted for you
	// template error at line 1, column 7: the first operand of sh here is code; it may not come from an argument or an expansion
	// <nil>
}

func ExampleRenderHTTP() {
	spec := policy.HTTPTemplate{
		Method:  "GET",
		URL:     "https://api.weather.com/forecast/{{city}}",
		Params:  map[string]string{"days": "{{duration}}", "units": "metric"},
		Headers: map[string]string{"Authorization": "Bearer {{secret.weather_key}}"},
	}
	r, err := policy.RenderHTTP(spec, map[string]any{"city": "São Paulo", "duration": 3},
		func(name string) (string, error) { return "k-123", nil })
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Method, r.URL)
	fmt.Println(r.Headers["Authorization"])

	spec.Method = "POST"
	spec.Params = map[string]string{"days": "{{duration}}", "note": "from {{city}}"}
	r, err = policy.RenderHTTP(spec, map[string]any{"city": "Tokyo", "duration": 3},
		func(name string) (string, error) { return "k-123", nil })
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Method, r.URL, string(r.Body))
	// Output:
	// GET https://api.weather.com/forecast/S%C3%A3o%20Paulo?days=3&units=metric
	// Bearer k-123
	// POST https://api.weather.com/forecast/Tokyo {"days":3,"note":"from Tokyo"}
}

func ExampleGenerateParameters() {
	schema, err := policy.GenerateParameters(policy.HTTPTemplate{
		Method: "GET",
		URL:    "https://api.weather.com/forecast/{{city}}",
		Params: map[string]string{"days": "{{duration}}", "units": "metric"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(schema))
	// Output:
	// {"type":"object","properties":{"city":{"type":"string"},"duration":{"type":"string"}},"required":["city"]}
}

func ExampleParseTemplate() {
	t, err := policy.ParseTemplate("{{ .a }} {{b}} {{secret.key}} {{a}}")
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Vars(), t.Secrets())
	out, _ := t.Render(map[string]any{"a": "{{b}}", "b": 1.5}, policy.RenderOptions{
		Secrets: func(string) (string, error) { return "***", nil },
	})
	fmt.Println(out)
	_, err = policy.ParseTemplate("x {{a b}}")
	fmt.Println(err)
	// Output:
	// [a b] [key]
	// {{b}} 1.5 *** {{b}}
	// template error at line 1, column 3: bad placeholder "{{a b}}": want {{.name}}, {{name}} or {{secret.NAME}}, name matching ^[A-Za-z_][A-Za-z0-9_]*$
}
