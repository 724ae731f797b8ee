package sokovan

/*
#include <sokovan/client.h>
*/
import "C"

import (
	"context"
	"unsafe"
)

// Session is a session as the manager reports it (list and show; History,
// Pending and Kernels come with Show only).
type Session struct {
	ID, Name, Owner, Project, Group  string
	Type, Status, StatusReason       string
	Priority                         int32
	ClusterMode                      string
	ClusterSize                      uint32
	Image                            string
	CreatedMs, StartedMs, FinishedMs int64
	ExitCode                         int32
	Slots                            string // requested, canonical text
	History                          []StatusChange
	Pending                          []PendingReason
	Kernels                          []KernelInfo
}

// StatusChange is one entry of a session's history.
type StatusChange struct {
	Status      string
	TimestampMs int64
	Reason      string
}

// PendingReason says why a pending session waits.
type PendingReason struct {
	Group, Predicate, Slot, Message string
	Shortfall                       Qty
}

// KernelInfo is one kernel of a shown session.
type KernelInfo struct {
	ID, Role, AgentID, ContainerID, Status, Address string
	Index                                           uint32
	ExitCode                                        int32
	Slots                                           string
	Published                                       []string
}

// ListOptions filters session.list ("ps").
type ListOptions struct {
	Owner, Group  string // "" = the caller's own / any group
	Statuses      []string
	Limit, Offset uint32
}

// List sends session.list and returns the sessions and the total count of
// matches before limit/offset.
func (c *Client) List(ctx context.Context, o ListOptions) ([]Session, uint64, error) {
	var out []Session
	var total uint64
	err := c.do(ctx, "Client.List", func(p *C.skv_client, a *cArena, e *C.skv_error) C.int {
		req := (*C.skv_proto_session_list)(a.alloc(C.sizeof_skv_proto_session_list))
		req.owner, req.resource_group = a.optStr(o.Owner), a.optStr(o.Group)
		req.statuses, req.n_statuses = strArray(a, o.Statuses), C.size_t(len(o.Statuses))
		req.limit, req.offset = C.uint32_t(o.Limit), C.uint32_t(o.Offset)
		var rep C.skv_proto_session_list_reply
		rc := C.skv_client_call(p, C.SKV_PROTO_SESSION_LIST, unsafe.Pointer(req), unsafe.Pointer(&rep), e)
		if rc == 0 {
			for _, s := range unsafe.Slice(rep.sessions, int(rep.n_sessions)) {
				out = append(out, goSession(&s))
			}
			total = uint64(rep.total)
			C.skv_proto_body_free(C.SKV_PROTO_SESSION_LIST_REPLY, unsafe.Pointer(&rep))
		}
		return rc
	})
	return out, total, err
}

// Show sends session.show: the session with history, kernels and pending
// reasons.
func (c *Client) Show(ctx context.Context, id string) (Session, error) {
	var out Session
	err := c.do(ctx, "Client.Show", func(p *C.skv_client, a *cArena, e *C.skv_error) C.int {
		var rep C.skv_proto_session_show_reply
		rc := C.skv_client_show(p, &rep, a.str(id), e)
		if rc == 0 {
			out = goSession(&rep.session)
			C.skv_proto_body_free(C.SKV_PROTO_SESSION_SHOW_REPLY, unsafe.Pointer(&rep))
		}
		return rc
	})
	return out, err
}

func slotsText(p *C.skv_slots) string {
	if p == nil {
		return ""
	}
	return (&Slots{p: p}).String()
}

func goSession(s *C.skv_proto_session_info) Session {
	out := Session{ID: optGoString(s.session_id), Name: optGoString(s.name), Owner: optGoString(s.owner),
		Project: optGoString(s.project), Group: optGoString(s.resource_group),
		Type: optGoString(s.session_type), Status: optGoString(s.status),
		StatusReason: optGoString(s.status_reason), Priority: int32(s.priority),
		ClusterMode: optGoString(s.cluster_mode), ClusterSize: uint32(s.cluster_size),
		Image: optGoString(s.image), CreatedMs: int64(s.created_ms), StartedMs: int64(s.started_ms),
		FinishedMs: int64(s.finished_ms), ExitCode: int32(s.exit_code), Slots: slotsText(s.slots)}
	for _, h := range unsafe.Slice(s.history, int(s.n_history)) {
		out.History = append(out.History, StatusChange{optGoString(h.status), int64(h.timestamp_ms), optGoString(h.reason)})
	}
	for _, r := range unsafe.Slice(s.pending, int(s.n_pending)) {
		out.Pending = append(out.Pending, PendingReason{optGoString(r.resource_group), optGoString(r.predicate),
			optGoString(r.slot), optGoString(r.message), Qty(r.shortfall)})
	}
	for _, k := range unsafe.Slice(s.kernels, int(s.n_kernels)) {
		ki := KernelInfo{ID: optGoString(k.kernel_id), Role: optGoString(k.role), AgentID: optGoString(k.agent_id),
			ContainerID: optGoString(k.container_id), Status: optGoString(k.status), Address: optGoString(k.address),
			Index: uint32(k.idx), ExitCode: int32(k.exit_code), Slots: slotsText(k.slots)}
		for _, pub := range unsafe.Slice(k.published, int(k.n_published)) {
			ki.Published = append(ki.Published, optGoString(pub))
		}
		out.Kernels = append(out.Kernels, ki)
	}
	return out
}
