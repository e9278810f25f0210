package daemon

import (
	"context"

	"github.com/toolcage/toolcage/store"
)

// storedSecrets reads secrets for the dispatcher: the store, under the
// current key.
type storedSecrets struct {
	key *secretsKey
	st  *store.Store
}

func (s storedSecrets) Secret(ctx context.Context, name string) ([]byte, error) {
	return s.key.getSecret(ctx, s.st, name)
}
