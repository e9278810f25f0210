package executors

import (
	"errors"

	"github.com/toolcage/toolcage/errdefs"
)

// ErrPluginShutdown is returned when the executor process went away.
var ErrPluginShutdown = &errdefs.Error{Code: errdefs.ExecutorFailed, Err: errors.New("executor process exited")}
