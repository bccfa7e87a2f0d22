package cluster

import (
	"context"
	"encoding/json"
	"strings"
)

// Holder returns the node whose lease in assign (the "assign" bucket)
// holds camera id, "" when no node holds it or the lease cannot be read.
func Holder(ctx context.Context, assign Bucket, id string) string {
	e, err := assign.Get(ctx, id)
	if err != nil {
		return ""
	}
	return LeaseNode(e.Value)
}

// HolderLiveURL returns where the node holding camera id's lease serves
// live video: its heartbeat's LiveURL in nodes (the "nodes" bucket),
// without a trailing slash; "" when no node holds the camera, its
// heartbeat is gone or names no address.
func HolderLiveURL(ctx context.Context, assign, nodes Bucket, id string) string {
	node := Holder(ctx, assign, id)
	if node == "" {
		return ""
	}
	e, err := nodes.Get(ctx, node)
	if err != nil {
		return ""
	}
	var info NodeInfo
	if json.Unmarshal(e.Value, &info) != nil {
		return ""
	}
	return strings.TrimRight(info.LiveURL, "/")
}
