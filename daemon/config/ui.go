package config

import (
	"errors"
	"time"
)

// UIConfig sets the review page.
type UIConfig struct {
	// Listen is a loopback host:port serving the page; "" is off.
	Listen string `mapstructure:"listen"`
	// LoginTTL is how long a login link works (once).
	LoginTTL time.Duration `mapstructure:"login_ttl"`
	// SessionTTL is how long a browser stays logged in.
	SessionTTL time.Duration `mapstructure:"session_ttl"`
}

// check validates the ui settings.
func (c UIConfig) check() []error {
	var errs []error
	if err := CheckLoopbackListen("ui.listen", c.Listen, "127.0.0.1:8765"); err != nil {
		errs = append(errs, err)
	}
	if c.LoginTTL <= 0 {
		errs = append(errs, errors.New("ui.login_ttl must be positive"))
	}
	if c.SessionTTL <= 0 {
		errs = append(errs, errors.New("ui.session_ttl must be positive"))
	}
	return errs
}
