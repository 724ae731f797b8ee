package sokovan

/*
#include <sokovan/client.h>
*/
import "C"

import (
	"context"
	"unsafe"
)

// The admin plane (admin.user, admin.keypair, admin.project, admin.domain,
// admin.resource_policy, admin.resource_group), as the Python binding's
// Client.admin and the CLI's `sokovan admin` use it. Each call sends one
// operation on one object and returns the objects the manager answers
// (none for AdminDelete). Empty strings are sent as absent: "unchanged"
// for AdminUpdate, "all" for the name of AdminList. Refusals come back by
// code: ErrPerm for a caller that is not an admin, ErrNotFound,
// ErrExist, ErrInvalid naming the field.

// AdminOp is the operation of an admin request.
type AdminOp uint32

// Admin operations.
const (
	AdminCreate AdminOp = C.SKV_PROTO_ADMIN_CREATE
	AdminUpdate AdminOp = C.SKV_PROTO_ADMIN_UPDATE
	AdminDelete AdminOp = C.SKV_PROTO_ADMIN_DELETE // the object's name identifies it
	AdminList   AdminOp = C.SKV_PROTO_ADMIN_LIST   // a name filters; "" = all
)

// Objects carry Inactive rather than the wire's `active` flag so that the
// zero value creates an active object; the flag is always sent (an update
// of an inactive object must say Inactive again).

// User is a user account.
type User struct {
	Name, Email    string
	Role           string // "user", "admin"
	Domain         string
	Projects       []string // AdminUpdate: none keeps the user's projects
	ResourcePolicy string
	Description    string
	Inactive       bool
}

// Keypair is an access key. SecretKey comes back only from AdminCreate
// (a Go string cannot be wiped: keep it no longer than needed).
type Keypair struct {
	AccessKey, SecretKey string
	User, ResourcePolicy string
	Inactive             bool
	CreatedMs            int64
}

// Project is a project of a domain.
type Project struct {
	Name, Domain, Description, ResourcePolicy string
	Inactive                                  bool
}

// Domain is a set of users and the resource groups they may use.
type Domain struct {
	Name, Description string
	ResourceGroups    []string
	Inactive          bool
}

// ResourcePolicy limits an owner (zeros: unlimited).
type ResourcePolicy struct {
	Name                  string
	MaxSlots              string // slot text ("cpu=8,mem=32g"), over running sessions; "" = none
	MaxConcurrentSessions uint32
	MaxPendingSessions    uint32
	MaxClusterSize        uint32
	MaxSessionLifetimeMs  uint64
}

// ResourceGroup is a group of agents with its scheduling settings.
type ResourceGroup struct {
	Name, Description   string
	Scheduler           string // sequencer name
	LostBatchPolicy     string // "requeue" or "fail"
	PendingTimeoutMs    uint64 // 0: wait forever
	SessionTypes        []string
	Inactive            bool
	Selector            string // "" keeps (create: "auto")
	Preemption          string // "on" / "off"; "" keeps (create: "off")
	PreemptMinRuntimeMs int64  // 0 keeps (create: 0); < 0 sets 0
	PreemptMode         string // "requeue" / "terminate"; "" keeps
}

// active is the wire's flag. A list sends 0, as the CLI does: an object
// with nothing set is left out of the request, and a set flag would make
// the encoder send it without its required name.
func active(op AdminOp, inactive bool) C.uint8_t {
	if inactive || op == AdminList {
		return 0
	}
	return 1
}

// adminCall sends one admin request: fill sets the object of the request
// (C memory from the arena), read copies the reply before it is freed.
func (c *Client) adminCall(ctx context.Context, op string, aop AdminOp, t, rt C.skv_proto_type,
	reqSize, repSize C.size_t, fill func(req unsafe.Pointer, a *cArena), read func(rep unsafe.Pointer)) error {
	if aop < AdminCreate || aop > AdminList {
		return goError(op, C.SKV_EINVAL, "unknown admin operation %d (AdminCreate, AdminUpdate, AdminDelete, AdminList)", aop)
	}
	return c.do(ctx, op, func(p *C.skv_client, a *cArena, e *C.skv_error) C.int {
		req := a.alloc(uintptr(reqSize))
		*(*C.uint32_t)(req) = C.uint32_t(aop) // op is every admin request's first field
		fill(req, a)
		rep := a.alloc(uintptr(repSize))
		rc := C.skv_client_call(p, t, req, rep, e)
		if rc == 0 {
			read(rep)
			C.skv_proto_body_free(rt, rep)
		}
		return rc
	})
}

// AdminUser sends admin.user.
func (c *Client) AdminUser(ctx context.Context, op AdminOp, u User) ([]User, error) {
	var out []User
	err := c.adminCall(ctx, "Client.AdminUser", op, C.SKV_PROTO_ADMIN_USER, C.SKV_PROTO_ADMIN_USER_REPLY,
		C.sizeof_skv_proto_admin_user, C.sizeof_skv_proto_admin_user_reply,
		func(req unsafe.Pointer, a *cArena) {
			r := &(*C.skv_proto_admin_user)(req).user
			r.name, r.email, r.role, r.domain = a.optStr(u.Name), a.optStr(u.Email), a.optStr(u.Role), a.optStr(u.Domain)
			r.projects, r.n_projects = strArray(a, u.Projects), C.size_t(len(u.Projects))
			r.resource_policy, r.description = a.optStr(u.ResourcePolicy), a.optStr(u.Description)
			r.active = active(op, u.Inactive)
		}, func(rep unsafe.Pointer) {
			r := (*C.skv_proto_admin_user_reply)(rep)
			for _, x := range unsafe.Slice(r.users, int(r.n_users)) {
				out = append(out, User{Name: optGoString(x.name), Email: optGoString(x.email),
					Role: optGoString(x.role), Domain: optGoString(x.domain),
					Projects: goStrings(x.projects, x.n_projects), ResourcePolicy: optGoString(x.resource_policy),
					Description: optGoString(x.description), Inactive: x.active == 0})
			}
		})
	return out, err
}

// AdminKeypair sends admin.keypair (AdminCreate for User makes a new key
// and returns its secret once).
func (c *Client) AdminKeypair(ctx context.Context, op AdminOp, k Keypair) ([]Keypair, error) {
	var out []Keypair
	err := c.adminCall(ctx, "Client.AdminKeypair", op, C.SKV_PROTO_ADMIN_KEYPAIR, C.SKV_PROTO_ADMIN_KEYPAIR_REPLY,
		C.sizeof_skv_proto_admin_keypair, C.sizeof_skv_proto_admin_keypair_reply,
		func(req unsafe.Pointer, a *cArena) {
			r := &(*C.skv_proto_admin_keypair)(req).keypair
			r.access_key, r.secret_key = a.optStr(k.AccessKey), a.optStr(k.SecretKey)
			r.user, r.resource_policy = a.optStr(k.User), a.optStr(k.ResourcePolicy)
			r.active, r.created_ms = active(op, k.Inactive), C.int64_t(k.CreatedMs)
		}, func(rep unsafe.Pointer) {
			r := (*C.skv_proto_admin_keypair_reply)(rep)
			for _, x := range unsafe.Slice(r.keypairs, int(r.n_keypairs)) {
				out = append(out, Keypair{AccessKey: optGoString(x.access_key), SecretKey: optGoString(x.secret_key),
					User: optGoString(x.user), ResourcePolicy: optGoString(x.resource_policy),
					Inactive: x.active == 0, CreatedMs: int64(x.created_ms)})
			}
		})
	return out, err
}

// AdminProject sends admin.project.
func (c *Client) AdminProject(ctx context.Context, op AdminOp, p Project) ([]Project, error) {
	var out []Project
	err := c.adminCall(ctx, "Client.AdminProject", op, C.SKV_PROTO_ADMIN_PROJECT, C.SKV_PROTO_ADMIN_PROJECT_REPLY,
		C.sizeof_skv_proto_admin_project, C.sizeof_skv_proto_admin_project_reply,
		func(req unsafe.Pointer, a *cArena) {
			r := &(*C.skv_proto_admin_project)(req).project
			r.name, r.domain, r.description = a.optStr(p.Name), a.optStr(p.Domain), a.optStr(p.Description)
			r.resource_policy, r.active = a.optStr(p.ResourcePolicy), active(op, p.Inactive)
		}, func(rep unsafe.Pointer) {
			r := (*C.skv_proto_admin_project_reply)(rep)
			for _, x := range unsafe.Slice(r.projects, int(r.n_projects)) {
				out = append(out, Project{Name: optGoString(x.name), Domain: optGoString(x.domain),
					Description: optGoString(x.description), ResourcePolicy: optGoString(x.resource_policy),
					Inactive: x.active == 0})
			}
		})
	return out, err
}

// AdminDomain sends admin.domain.
func (c *Client) AdminDomain(ctx context.Context, op AdminOp, d Domain) ([]Domain, error) {
	var out []Domain
	err := c.adminCall(ctx, "Client.AdminDomain", op, C.SKV_PROTO_ADMIN_DOMAIN, C.SKV_PROTO_ADMIN_DOMAIN_REPLY,
		C.sizeof_skv_proto_admin_domain, C.sizeof_skv_proto_admin_domain_reply,
		func(req unsafe.Pointer, a *cArena) {
			r := &(*C.skv_proto_admin_domain)(req).domain
			r.name, r.description = a.optStr(d.Name), a.optStr(d.Description)
			r.resource_groups, r.n_resource_groups = strArray(a, d.ResourceGroups), C.size_t(len(d.ResourceGroups))
			r.active = active(op, d.Inactive)
		}, func(rep unsafe.Pointer) {
			r := (*C.skv_proto_admin_domain_reply)(rep)
			for _, x := range unsafe.Slice(r.domains, int(r.n_domains)) {
				out = append(out, Domain{Name: optGoString(x.name), Description: optGoString(x.description),
					ResourceGroups: goStrings(x.resource_groups, x.n_resource_groups), Inactive: x.active == 0})
			}
		})
	return out, err
}

// AdminResourcePolicy sends admin.resource_policy. ErrInvalid for
// MaxSlots that do not parse (nothing is sent).
func (c *Client) AdminResourcePolicy(ctx context.Context, op AdminOp, p ResourcePolicy) ([]ResourcePolicy, error) {
	var out []ResourcePolicy
	var maxSlots *Slots
	if p.MaxSlots != "" {
		var err error
		if maxSlots, err = ParseSlots(p.MaxSlots); err != nil {
			return nil, err
		}
		defer maxSlots.Close()
	}
	err := c.adminCall(ctx, "Client.AdminResourcePolicy", op, C.SKV_PROTO_ADMIN_RESOURCE_POLICY,
		C.SKV_PROTO_ADMIN_RESOURCE_POLICY_REPLY, C.sizeof_skv_proto_admin_resource_policy,
		C.sizeof_skv_proto_admin_resource_policy_reply,
		func(req unsafe.Pointer, a *cArena) {
			r := &(*C.skv_proto_admin_resource_policy)(req).policy
			r.name = a.optStr(p.Name)
			if maxSlots != nil {
				r.max_slots = maxSlots.p
			}
			r.max_concurrent_sessions = C.uint32_t(p.MaxConcurrentSessions)
			r.max_pending_sessions = C.uint32_t(p.MaxPendingSessions)
			r.max_cluster_size = C.uint32_t(p.MaxClusterSize)
			r.max_session_lifetime_ms = C.uint64_t(p.MaxSessionLifetimeMs)
		}, func(rep unsafe.Pointer) {
			r := (*C.skv_proto_admin_resource_policy_reply)(rep)
			for _, x := range unsafe.Slice(r.policies, int(r.n_policies)) {
				out = append(out, ResourcePolicy{Name: optGoString(x.name), MaxSlots: slotsText(x.max_slots),
					MaxConcurrentSessions: uint32(x.max_concurrent_sessions),
					MaxPendingSessions:    uint32(x.max_pending_sessions),
					MaxClusterSize:        uint32(x.max_cluster_size),
					MaxSessionLifetimeMs:  uint64(x.max_session_lifetime_ms)})
			}
		})
	return out, err
}

// AdminResourceGroup sends admin.resource_group.
func (c *Client) AdminResourceGroup(ctx context.Context, op AdminOp, g ResourceGroup) ([]ResourceGroup, error) {
	var out []ResourceGroup
	err := c.adminCall(ctx, "Client.AdminResourceGroup", op, C.SKV_PROTO_ADMIN_RESOURCE_GROUP,
		C.SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, C.sizeof_skv_proto_admin_resource_group,
		C.sizeof_skv_proto_admin_resource_group_reply,
		func(req unsafe.Pointer, a *cArena) {
			r := &(*C.skv_proto_admin_resource_group)(req).group
			r.name, r.description, r.scheduler = a.optStr(g.Name), a.optStr(g.Description), a.optStr(g.Scheduler)
			r.lost_batch_policy, r.pending_timeout_ms = a.optStr(g.LostBatchPolicy), C.uint64_t(g.PendingTimeoutMs)
			r.session_types, r.n_session_types = strArray(a, g.SessionTypes), C.size_t(len(g.SessionTypes))
			r.active, r.selector, r.preemption = active(op, g.Inactive), a.optStr(g.Selector), a.optStr(g.Preemption)
			r.preempt_min_runtime_ms, r.preempt_mode = C.int64_t(g.PreemptMinRuntimeMs), a.optStr(g.PreemptMode)
		}, func(rep unsafe.Pointer) {
			r := (*C.skv_proto_admin_resource_group_reply)(rep)
			for _, x := range unsafe.Slice(r.groups, int(r.n_groups)) {
				out = append(out, ResourceGroup{Name: optGoString(x.name), Description: optGoString(x.description),
					Scheduler: optGoString(x.scheduler), LostBatchPolicy: optGoString(x.lost_batch_policy),
					PendingTimeoutMs: uint64(x.pending_timeout_ms),
					SessionTypes:     goStrings(x.session_types, x.n_session_types), Inactive: x.active == 0,
					Selector: optGoString(x.selector), Preemption: optGoString(x.preemption),
					PreemptMinRuntimeMs: int64(x.preempt_min_runtime_ms), PreemptMode: optGoString(x.preempt_mode)})
			}
		})
	return out, err
}
