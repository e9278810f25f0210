package daemon

import (
	"encoding/json"
	"fmt"

	"github.com/toolcage/toolcage/configs"
	"github.com/toolcage/toolcage/policy"
)

// LoadShellRules builds the shell deny rules the config asks for: the
// built-in rule file with groups switched off and user rules added.
func LoadShellRules(c ShellRulesConfig) (*policy.ShellRules, error) {
	base, err := policy.LoadShellRules(configs.ShellRules)
	if err != nil {
		return nil, fmt.Errorf("built-in shell rules: %w", err)
	}
	var extra []policy.ShellRule
	if len(c.Extra) > 0 {
		b, err := json.Marshal(c.Extra)
		if err != nil {
			return nil, fmt.Errorf("shell.rules.extra: %w", err)
		}
		if err := json.Unmarshal(b, &extra); err != nil {
			return nil, fmt.Errorf("shell.rules.extra: %w", err)
		}
	}
	rules, err := base.With(policy.ShellRulesOptions{DisabledGroups: c.DisabledGroups, Extra: extra})
	if err != nil {
		return nil, fmt.Errorf("shell.rules: %w", err)
	}
	return rules, nil
}
