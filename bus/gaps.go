package bus

import (
	"encoding/json"
	"fmt"

	"github.com/vigia/vigia/status"
)

// marshalGap validates g and returns its JSON.
func marshalGap(g status.Gap, key string) ([]byte, error) {
	if err := validCamera(g.Camera); err != nil {
		return nil, fmt.Errorf("publish gap: %w", err)
	}
	if key == "" || !g.Cause.Known() || g.StartMs <= 0 || (g.EndMs != 0 && g.EndMs < g.StartMs) {
		return nil, fmt.Errorf("publish gap %q: %w: %+v", key, ErrInvalidMessage, g)
	}
	data, err := json.Marshal(g)
	if err != nil {
		return nil, fmt.Errorf("publish gap %s: encode: %w", key, err)
	}
	return data, nil
}
