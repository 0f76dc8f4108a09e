package coord

import (
	"context"
	"net/http"
	"net/url"
)

func groupPath(prefix, group string) string {
	return "/streams/" + url.PathEscape(prefix) + "/groups/" + url.PathEscape(group)
}

func monitoringGroupPath(prefix, group string) string {
	return "/monitoring/streams/" + url.PathEscape(prefix) + "/groups/" + url.PathEscape(group)
}

// Health reads GET /monitoring/health.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var out Health
	if err := c.do(ctx, http.MethodGet, "/monitoring/health", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Group reads GET /streams/{p}/groups/{g}.
func (c *Client) Group(ctx context.Context, prefix, group string) (*Group, error) {
	var out Group
	if err := c.do(ctx, http.MethodGet, groupPath(prefix, group), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ProducerRouting reads GET /streams/{p}/groups/{g}/producer-routing.
func (c *Client) ProducerRouting(ctx context.Context, prefix, group string) (*ProducerRouting, error) {
	var out ProducerRouting
	if err := c.do(ctx, http.MethodGet, groupPath(prefix, group)+"/producer-routing", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Groups reads GET /monitoring/groups: every group of every prefix.
func (c *Client) Groups(ctx context.Context) ([]Group, error) {
	var out GroupList
	if err := c.do(ctx, http.MethodGet, "/monitoring/groups", nil, &out); err != nil {
		return nil, err
	}
	return out.Groups, nil
}

// Migrations reads GET /monitoring/streams/{p}/groups/{g}/migrations.
func (c *Client) Migrations(ctx context.Context, prefix, group string) (*MigrationList, error) {
	var out MigrationList
	if err := c.do(ctx, http.MethodGet, monitoringGroupPath(prefix, group)+"/migrations", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Migration reads GET /streams/{p}/groups/{g}/migrations/{id}.
func (c *Client) Migration(ctx context.Context, prefix, group, id string) (*Migration, error) {
	var out Migration
	if err := c.do(ctx, http.MethodGet, groupPath(prefix, group)+"/migrations/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Assignments reads GET /monitoring/streams/{p}/groups/{g}/assignments.
func (c *Client) Assignments(ctx context.Context, prefix, group string) (*Assignments, error) {
	var out Assignments
	if err := c.do(ctx, http.MethodGet, monitoringGroupPath(prefix, group)+"/assignments", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Members reads GET /monitoring/streams/{p}/groups/{g}/members.
func (c *Client) Members(ctx context.Context, prefix, group string) ([]Member, error) {
	var out MemberList
	if err := c.do(ctx, http.MethodGet, monitoringGroupPath(prefix, group)+"/members", nil, &out); err != nil {
		return nil, err
	}
	return out.Members, nil
}

// CreateStream calls the official POST /streams/{p}. The coordinator then holds
// one group named like the prefix, with no consumers (coordinator.md §1).
func (c *Client) CreateStream(ctx context.Context, prefix string, req CreateRequest) (*StreamCreated, error) {
	var out StreamCreated
	if err := c.do(ctx, http.MethodPost, "/streams/"+url.PathEscape(prefix), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateGroup calls the compat POST /streams/{p}/groups/{g} the Terraform module uses.
func (c *Client) CreateGroup(ctx context.Context, prefix, group string, req CreateRequest) (*Group, error) {
	var out Group
	if err := c.do(ctx, http.MethodPost, groupPath(prefix, group), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteGroup calls DELETE /streams/{p}/groups/{g}; it returns the snapshot taken
// before the delete.
func (c *Client) DeleteGroup(ctx context.Context, prefix, group string, req DeleteRequest) (*Group, error) {
	var out Group
	if err := c.do(ctx, http.MethodDelete, groupPath(prefix, group), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ScaleStream calls POST /streams/{p}/scale, which rescales every group of the prefix.
func (c *Client) ScaleStream(ctx context.Context, prefix string, req ScaleRequest) (*StreamScale, error) {
	var out StreamScale
	if err := c.do(ctx, http.MethodPost, "/streams/"+url.PathEscape(prefix)+"/scale", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ScaleGroup calls the compat POST /streams/{p}/groups/{g}/scale.
func (c *Client) ScaleGroup(ctx context.Context, prefix, group string, req ScaleRequest) (*Migration, error) {
	var out Migration
	if err := c.do(ctx, http.MethodPost, groupPath(prefix, group)+"/scale", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Rollback calls POST /streams/{p}/groups/{g}/migrations/{id}/rollback; only an
// ACTIVE migration can be rolled back, one group at a time.
func (c *Client) Rollback(ctx context.Context, prefix, group, id string, req RollbackRequest) (*Migration, error) {
	var out Migration
	path := groupPath(prefix, group) + "/migrations/" + url.PathEscape(id) + "/rollback"
	if err := c.do(ctx, http.MethodPost, path, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
