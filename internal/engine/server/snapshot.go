package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/snapshot"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel/errno"
)

// seed points a new VM's memory layers at a snapshot or at the VM it
// forks, as the CreateVM request asks.
func (c *conn) seed(ctx context.Context, cfg *vmhost.Config, b *proto.CreateVM) error {
	switch {
	case b.ForkOf != 0 && (b.FromStore != "" || b.FromID != ""):
		return fmt.Errorf("engine: a VM is either restored or forked: %w", errno.EINVAL)
	case b.ForkOf != 0:
		parent, err := c.vm(b.ForkOf)
		if err != nil {
			return err
		}
		cfg.ForkOf = parent.host
	case b.FromStore != "" || b.FromID != "":
		st, err := snapshot.Open(b.FromStore, storeCreds(b.FromAuth))
		if err != nil {
			return err
		}
		m, err := snapshot.Load(ctx, st, b.FromID)
		if err != nil {
			return err
		}
		cfg.From = &vmhost.Restore{Store: st, Manifest: m}
	}
	return nil
}

// storeCreds turns the protocol's credentials into the store's.
func storeCreds(a *proto.StoreAuth) snapshot.Credentials {
	if a == nil {
		return snapshot.Credentials{}
	}
	return snapshot.Credentials{AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey, SessionToken: a.SessionToken}
}

// snapshot saves a VM to a store and answers with the
// manifest's summary (snapshot.Summary).
func (c *conn) snapshot(ctx context.Context, h *vmhost.Host, b *proto.Snapshot) *proto.Response {
	if len(b.Meta) > snapshot.MaxMeta {
		return errResp(&vmhost.TooLargeError{What: "snapshot metadata", Size: int64(len(b.Meta)), Limit: snapshot.MaxMeta})
	}
	sum, err := h.SnapshotTo(ctx, b.Store, storeCreds(b.Auth), b.Meta)
	if err != nil {
		return errResp(err)
	}
	data, err := json.Marshal(sum)
	if err != nil {
		return errResp(err)
	}
	return &proto.Response{Data: data}
}
