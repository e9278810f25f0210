package daemon

import (
	"encoding/json"
	"fmt"

	"github.com/toolcage/toolcage/configs"
	"github.com/toolcage/toolcage/policy/shellguard"
)

// LoadShellRules builds the shell deny rules the config asks for: the
// built-in rule file with groups switched off and user rules added.
func LoadShellRules(c ShellRulesConfig) (*shellguard.Rules, error) {
	base, err := shellguard.Load(configs.ShellRules)
	if err != nil {
		return nil, fmt.Errorf("built-in shell rules: %w", err)
	}
	var extra []shellguard.Rule
	if len(c.Extra) > 0 {
		b, err := json.Marshal(c.Extra)
		if err != nil {
			return nil, fmt.Errorf("shell.rules.extra: %w", err)
		}
		if err := json.Unmarshal(b, &extra); err != nil {
			return nil, fmt.Errorf("shell.rules.extra: %w", err)
		}
	}
	rules, err := base.With(shellguard.Options{DisabledGroups: c.DisabledGroups, Extra: extra})
	if err != nil {
		return nil, fmt.Errorf("shell.rules: %w", err)
	}
	return rules, nil
}
