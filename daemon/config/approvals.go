package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/toolcage/toolcage/daemon/webhook"
)

// ApprovalsConfig sets the approval queue.
type ApprovalsConfig struct {
	// Timeout is how long a caller waits for a person's decision.
	Timeout time.Duration `mapstructure:"timeout"`
	// Validity is how long after a person allows a call that no longer
	// waits (--no-wait, gave up, daemon restarted) its caller's identical
	// retry runs on that approval, once. 0: only a waiting caller runs.
	Validity time.Duration `mapstructure:"validity"`
	// Webhook, when set, receives a JSON POST announcing each new approval.
	Webhook string `mapstructure:"webhook"`
	// WebhookTimeout bounds one POST.
	WebhookTimeout time.Duration `mapstructure:"webhook_timeout"`
	// WebhookAllowPrivate lets the webhook's host be (or resolve to) a
	// loopback or private address.
	WebhookAllowPrivate bool `mapstructure:"webhook_allow_private"`
}

// check validates the approvals settings.
func (c ApprovalsConfig) check() []error {
	var errs []error
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("approvals.timeout must be positive"))
	}
	if c.Validity < 0 {
		errs = append(errs, errors.New("approvals.validity must not be negative (0 turns retries on an allowed approval off)"))
	}
	if c.Webhook != "" {
		if _, err := webhook.CheckURL(c.Webhook, c.WebhookAllowPrivate); err != nil {
			errs = append(errs, fmt.Errorf("approvals.webhook: %w", err))
		}
		if c.WebhookTimeout <= 0 {
			errs = append(errs, errors.New("approvals.webhook_timeout must be positive"))
		}
	}
	return errs
}
