package sokovan

/*
#include <sokovan/client.h>
*/
import "C"

import (
	"context"
	"unsafe"
)

// AgentInfo is an agent as the manager reports it (agent.list).
type AgentInfo struct {
	ID, Group, Architecture, Address string
	Status                           string // "alive", "lost", ...
	Labels                           map[string]string
	Devices                          []AgentDevice
	Capacity, Occupied               string // canonical slot text
	LastHeartbeatMs                  int64
	Running                          uint32 // kernels running there
}

// AgentDevice is one device of an agent.
type AgentDevice struct {
	ID, Kind     string // "cuda:0", "cuda"; "cpu", "cpu"; ...
	NUMANode     int32  // -1 unknown
	Slots        string // what it offers, canonical slot text
	Model, BusID string
}

// ImageInfo is an image the agents hold (image.list).
type ImageInfo struct {
	Name, Architecture, Digest string
	SizeBytes                  uint64
	Agents                     []string
}

// Agents sends agent.list: the agents of group ("" = every group), lost
// ones too with includeLost.
func (c *Client) Agents(ctx context.Context, group string, includeLost bool) ([]AgentInfo, error) {
	var out []AgentInfo
	err := c.do(ctx, "Client.Agents", func(p *C.skv_client, a *cArena, e *C.skv_error) C.int {
		req := (*C.skv_proto_agent_list)(a.alloc(C.sizeof_skv_proto_agent_list))
		req.resource_group = a.optStr(group)
		if includeLost {
			req.include_lost = 1
		}
		var rep C.skv_proto_agent_list_reply
		rc := C.skv_client_call(p, C.SKV_PROTO_AGENT_LIST, unsafe.Pointer(req), unsafe.Pointer(&rep), e)
		if rc == 0 {
			for _, ag := range unsafe.Slice(rep.agents, int(rep.n_agents)) {
				out = append(out, goAgent(&ag))
			}
			C.skv_proto_body_free(C.SKV_PROTO_AGENT_LIST_REPLY, unsafe.Pointer(&rep))
		}
		return rc
	})
	return out, err
}

func goAgent(ag *C.skv_proto_agent_info) AgentInfo {
	out := AgentInfo{ID: optGoString(ag.agent_id), Group: optGoString(ag.resource_group),
		Architecture: optGoString(ag.architecture), Address: optGoString(ag.address),
		Status: optGoString(ag.status), Labels: goKVs(ag.labels, ag.n_labels),
		Capacity: slotsText(ag.capacity), Occupied: slotsText(ag.occupied),
		LastHeartbeatMs: int64(ag.last_heartbeat_ms), Running: uint32(ag.n_running)}
	for _, d := range unsafe.Slice(ag.devices, int(ag.n_devices)) {
		out.Devices = append(out.Devices, AgentDevice{ID: optGoString(d.id), Kind: optGoString(d.kind),
			NUMANode: int32(d.numa_node), Slots: slotsText(d.slots), Model: optGoString(d.model),
			BusID: optGoString(d.bus_id)})
	}
	return out
}

// Images sends image.list: the images of an architecture ("" = all).
func (c *Client) Images(ctx context.Context, architecture string) ([]ImageInfo, error) {
	var out []ImageInfo
	err := c.do(ctx, "Client.Images", func(p *C.skv_client, a *cArena, e *C.skv_error) C.int {
		req := (*C.skv_proto_image_list)(a.alloc(C.sizeof_skv_proto_image_list))
		req.architecture = a.optStr(architecture)
		var rep C.skv_proto_image_list_reply
		rc := C.skv_client_call(p, C.SKV_PROTO_IMAGE_LIST, unsafe.Pointer(req), unsafe.Pointer(&rep), e)
		if rc == 0 {
			for _, im := range unsafe.Slice(rep.images, int(rep.n_images)) {
				out = append(out, ImageInfo{Name: optGoString(im.name), Architecture: optGoString(im.architecture),
					Digest: optGoString(im.digest), SizeBytes: uint64(im.size_bytes),
					Agents: goStrings(im.agents, im.n_agents)})
			}
			C.skv_proto_body_free(C.SKV_PROTO_IMAGE_LIST_REPLY, unsafe.Pointer(&rep))
		}
		return rc
	})
	return out, err
}

// goKVs copies a C key/value array (nil when empty).
func goKVs(p *C.skv_proto_kv, n C.size_t) map[string]string {
	if n == 0 {
		return nil
	}
	out := make(map[string]string, int(n))
	for _, kv := range unsafe.Slice(p, int(n)) {
		out[optGoString(kv.key)] = optGoString(kv.value)
	}
	return out
}

// goStrings copies a C string array (nil when empty).
func goStrings(p **C.char, n C.size_t) []string {
	var out []string
	for _, s := range unsafe.Slice(p, int(n)) {
		out = append(out, optGoString(s))
	}
	return out
}
