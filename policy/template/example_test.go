package template_test

import (
	"fmt"

	"github.com/toolcage/toolcage/policy/template"
)

func ExampleRenderShell() {
	// One simple command: an argv, no shell. Each placeholder is one element.
	r, err := template.RenderShell("dig +short {{.record_type}} {{.domain}}",
		map[string]any{"record_type": "MX", "domain": "example.com; rm -rf ~"}, template.ShellOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %q\n", r.Mode, r.Argv)

	// Shell syntax: sh -c text, every value one single-quoted word.
	r, err = template.RenderShell("ls -la {{dir}} | wc -l", map[string]any{"dir": "it's $(here)"}, template.ShellOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Mode, r.Command)

	// A value may not become an option.
	_, err = template.RenderShell("curl {{url}}", map[string]any{"url": "--upload-file=/etc/passwd"}, template.ShellOptions{})
	fmt.Println(err)
	// Output:
	// argv ["dig" "+short" "MX" "example.com; rm -rf ~"]
	// shell ls -la 'it'\''s $(here)' | wc -l
	// argument "url": starts with "-" where the command would read it as an option; the parameter must allow a leading "-" (or the template must put "--" before it)
}

func ExampleValidateShell() {
	fmt.Println(template.ValidateShell(`echo "Hello {{.name}}"`))
	fmt.Println(template.ValidateShell(`sh -c {{.script}}`))
	fmt.Println(template.ValidateShell(`echo Hello {{.name}}`))
	// Output:
	// template error at line 1, column 13: placeholder inside double quotes; write it unquoted: values are quoted for you
	// template error at line 1, column 7: the first operand of sh here is code; it may not come from an argument or an expansion
	// <nil>
}

func ExampleRenderHTTP() {
	spec := template.HTTPSpec{
		Method:  "GET",
		URL:     "https://api.weather.com/forecast/{{city}}",
		Params:  map[string]string{"days": "{{duration}}", "units": "metric"},
		Headers: map[string]string{"Authorization": "Bearer {{secret.weather_key}}"},
	}
	r, err := template.RenderHTTP(spec, map[string]any{"city": "São Paulo", "duration": 3},
		func(name string) (string, error) { return "k-123", nil })
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Method, r.URL)
	fmt.Println(r.Headers["Authorization"])

	spec.Method = "POST"
	spec.Params = map[string]string{"days": "{{duration}}", "note": "from {{city}}"}
	r, err = template.RenderHTTP(spec, map[string]any{"city": "Tokyo", "duration": 3},
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
	schema, err := template.GenerateParameters(template.HTTPSpec{
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

func ExampleParse() {
	t, err := template.Parse("{{ .a }} {{b}} {{secret.key}} {{a}}")
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Vars(), t.Secrets())
	out, _ := t.Render(map[string]any{"a": "{{b}}", "b": 1.5}, template.RenderOptions{
		Secrets: func(string) (string, error) { return "***", nil },
	})
	fmt.Println(out)
	_, err = template.Parse("x {{a b}}")
	fmt.Println(err)
	// Output:
	// [a b] [key]
	// {{b}} 1.5 *** {{b}}
	// template error at line 1, column 3: bad placeholder "{{a b}}": want {{.name}}, {{name}} or {{secret.NAME}}, name matching ^[A-Za-z_][A-Za-z0-9_]*$
}
