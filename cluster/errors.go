package cluster

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// isWrongRevision reports a compare-and-set failure: someone else changed
// the key.
func isWrongRevision(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return true
	}
	return errors.Is(err, jetstream.ErrKeyExists)
}

func jetstreamLastRevision(rev uint64) jetstream.KVDeleteOpt {
	return jetstream.LastRevision(rev)
}
